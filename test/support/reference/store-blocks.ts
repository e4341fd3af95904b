/**
 * The blocks that run through our store only: call activities and
 * multi-instance activities (a called instance and each item are instances
 * of their own, engine/store/calls.ts and items.ts). Their insides are
 * plain (generate.ts): tasks, timers, sequences and parallel blocks, so no
 * condition reads a variable a called instance or an item holds a copy of
 * (ours) and shares (bpmn-engine), and no error or escalation crosses into
 * the caller (we keep them inside, bpmn-engine passes them out).
 */
import fc from 'fast-check';
import { block, boundary, type Ctx, type Weighted } from './generate';
import { type Block, type Completion, seq } from './shapes';

/** Timer boundary events only: ours refuses an error or escalation boundary event on a call or a multi-instance activity. */
const timers = (ctx: Ctx) =>
  fc.oneof(
    { arbitrary: fc.constant([]), weight: 2 },
    { arbitrary: fc.array(boundary(ctx, 'user'), { minLength: 1, maxLength: 1 }), weight: 1 },
  );

const inside = (ctx: Ctx): Ctx => ({ depth: Math.min(ctx.depth, 1), spawned: false, handler: true, plain: true });

/**
 * A completion condition that both engines read alike for this activity:
 * `done` where an item returns something (a user task, a job); `second`
 * where items end in item order (sequential, or items that never wait).
 * (`missing`, which only we fail on, is defects.ts's defect 2.)
 */
function completion(activity: 'user' | 'job' | 'pass' | 'sub', sequential: boolean, pick: number): Completion | null {
  const fitting: (Completion | null)[] = [null];
  if (activity === 'user' || activity === 'job') fitting.push('done', 'done');
  if (sequential || activity === 'pass') fitting.push('second');
  return fitting[pick % fitting.length] ?? null;
}

export function storeBlocks(ctx: Ctx): Weighted<Block>[] {
  const call = fc
    .record({ callee: fc.oneof(fc.constant(seq({ kind: 'pass' })), block(inside(ctx))), boundaries: timers(ctx) })
    .map((c): Block => ({ kind: 'call', ...c }));
  const mi = fc
    .record({
      activity: fc.constantFrom('user' as const, 'job' as const, 'pass' as const, 'sub' as const),
      body: block(inside(ctx)),
      sequential: fc.boolean(),
      count: fc.integer({ min: 1, max: 3 }),
      pick: fc.nat({ max: 11 }),
      boundaries: timers(ctx),
    })
    .map(({ activity, body, sequential, count, pick, boundaries }): Block => ({
      kind: 'mi',
      activity,
      body: activity === 'sub' ? body : seq(),
      sequential,
      count,
      completion: completion(activity, sequential, pick),
      // Items of a task never wait: ours refuses a timer boundary event on it.
      boundaries: activity === 'pass' ? [] : boundaries,
    }));
  return [
    { arbitrary: call, weight: 3 },
    { arbitrary: mi, weight: 3 },
  ];
}
