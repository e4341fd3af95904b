/**
 * The shapes of issue 39's defects the generator also draws, each inside a
 * random model. Defect 1 (loops within one step) runs in the pure core;
 * defects 2 and 7 are multi-instance activities, which run through the
 * store (store-blocks.ts, test/engine/reference-engine-store.test.ts).
 */
import fc from 'fast-check';
import { block, type Ctx, errorCode, escalationCode, flag, startVariables } from './generate';
import { type Block, type Boundary, type Handler, NONE, seq, type Shape } from './shapes';

/**
 * The shapes of defect 1, each inside a random model: an error event
 * subprocess whose body throws the code it catches (1a); a non-interrupting
 * escalation event subprocess that throws what it catches (1b); an error
 * boundary event on a subprocess whose flow leads back into it while a path
 * inside ends in an error end event with no wait before it (1c).
 */
export function defectOneShape(): fc.Arbitrary<Shape> {
  const ctx: Ctx = { depth: 1, spawned: false, handler: false };
  const around = block(ctx);
  const code = errorCode;
  const oneA = fc
    .record({ code, catchAll: fc.boolean(), before: around, viaJob: fc.boolean() })
    .map(({ code: c, catchAll, before, viaJob }): { body: Block; handlers: Handler[]; origin: string } => ({
      body: viaJob ? seq(before, { kind: 'job', boundaries: [] }) : before,
      handlers: [
        { kind: 'error', code: catchAll ? null : c, body: seq({ kind: 'pass' }), ending: { kind: 'error', code: c } },
      ],
      origin: 'defect-1a',
    }));
  const oneB = fc
    .record({ code: escalationCode, catchAll: fc.boolean(), before: around, asEnd: fc.boolean() })
    .map(({ code: c, catchAll, before, asEnd }): { body: Block; handlers: Handler[]; origin: string } => ({
      body: seq(before, { kind: 'escalate', code: c }, { kind: 'user', boundaries: [] }),
      handlers: [
        {
          kind: 'escalation',
          code: catchAll ? null : c,
          interrupting: false,
          body: asEnd ? seq() : seq({ kind: 'escalate', code: c }),
          ending: asEnd ? { kind: 'escalation', code: c } : NONE,
        },
      ],
      origin: 'defect-1b',
    }));
  const oneC = fc
    .record({ code, catchAll: fc.boolean(), before: around, guard: flag, direct: fc.boolean() })
    .map(({ code: c, catchAll, before, guard, direct }): { body: Block; handlers: Handler[]; origin: string } => {
      const inside: Block = direct
        ? seq({ kind: 'pass' })
        : {
            kind: 'xor',
            branches: [
              { when: guard, body: seq({ kind: 'pass' }), ending: { kind: 'error', code: c } },
              { when: null, body: seq({ kind: 'user', boundaries: [] }), ending: null },
            ],
            otherwise: 1,
          };
      const retry: Boundary = { kind: 'error', code: catchAll ? null : c, then: seq(), to: 'back', ending: NONE };
      return {
        body: seq(before, {
          kind: 'sub',
          body: inside,
          ending: direct ? { kind: 'error', code: c } : NONE,
          boundaries: [retry],
          handlers: [],
        }),
        handlers: [],
        origin: 'defect-1c',
      };
    });
  return fc
    .record({ drawn: fc.oneof(oneA, oneB, oneC), start: startVariables })
    .map(({ drawn, start }): Shape => ({ ...drawn, ending: NONE, start }));
}

/**
 * The multi-instance shapes of defects 2 and 7, each after a random block:
 * a completion condition that fails (FEEL reads a variable no item sets,
 * 2), and items that never wait (a task, or a subprocess of tasks) with a
 * completion condition (7).
 */
export function defectItemsShape(): fc.Arbitrary<Shape> {
  const before = block({ depth: 1, spawned: false, handler: false });
  const items = fc
    .record({
      activity: fc.constantFrom('user' as const, 'job' as const, 'pass' as const, 'sub' as const),
      sequential: fc.boolean(),
      count: fc.integer({ min: 1, max: 3 }),
      second: fc.boolean(),
    })
    .map(({ activity, sequential, count, second }): { item: Block; origin: string } => {
      const synchronous = activity === 'pass' || activity === 'sub';
      return {
        item: {
          kind: 'mi',
          activity,
          body: activity === 'sub' ? seq({ kind: 'pass' }, { kind: 'pass' }) : seq(),
          sequential,
          count,
          completion: synchronous && second ? 'second' : 'missing',
          boundaries: [],
        },
        origin: synchronous && second ? 'defect-7' : 'defect-2',
      };
    });
  return fc
    .record({ before, items, start: startVariables })
    .map(({ before: b, items: { item, origin }, start }): Shape => ({
      body: seq(b, item, { kind: 'user', boundaries: [] }),
      ending: NONE,
      handlers: [],
      start,
      origin,
    }));
}
