/**
 * fast-check arbitraries of the blocks the differential test's models are
 * made of: random block-structured processes from the subset both engines
 * support (models.ts mixes in the defect shapes of defects.ts, and the
 * call and multi-instance activities of store-blocks.ts).
 *
 * One rule keeps the comparison meaningful: no element is ever reached by a
 * second token while a first one is still in it (bpmn-engine queues the
 * second behind the first, we run both). The paths a non-interrupting event
 * spawns therefore never wait: they run to their end in the step that
 * spawned them.
 */
import fc from 'fast-check';
import {
  type Block,
  type Boundary,
  type Branch,
  type Ending,
  ERROR_CODES,
  ESCALATION_CODES,
  FLAGS,
  type Handler,
  NONE,
  seq,
  type Shape,
} from './shapes';

export interface Ctx {
  readonly depth: number;
  /** On a path a non-interrupting event spawned: nothing on it may wait. */
  readonly spawned: boolean;
  /** Inside an error event subprocess's body: no job, whose error would be thrown inside the handler. */
  readonly handler: boolean;
  /** On a boundary event's path: tasks without boundary events of their own. */
  readonly bare?: boolean;
  /** Inside a loop's body: a parallel or inclusive branch may not end on its own (its token would still run when the loop comes round). */
  readonly inLoop?: boolean;
  /**
   * Nothing after this block, up to its scope's end, merges or joins paths. Only there may a loop be
   * drawn: each round discards the loop's way out, and bpmn-engine's joins and merges count a discard
   * as an arrival (known.ts, join-counts-discarded-flow).
   */
  readonly tail?: boolean;
  /** A called process's or a multi-instance subprocess's body: tasks, timers, sequences and parallel blocks only. */
  readonly plain?: boolean;
  /** More composite blocks (store-blocks.ts: call activities, multi-instance activities), given the context. */
  readonly extra?: (ctx: Ctx) => Weighted<Block>[];
}

export interface Weighted<T> {
  readonly arbitrary: fc.Arbitrary<T>;
  readonly weight: number;
}

export const flag = fc.constantFrom(...FLAGS);
export const errorCode = fc.constantFrom(...ERROR_CODES);
export const escalationCode = fc.constantFrom(...ESCALATION_CODES);
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: arb, weight: 3 }, { arbitrary: fc.constant(null), weight: 1 });

/** How a path ends: mostly a none end event. */
const ending: fc.Arbitrary<Ending> = fc.oneof(
  { arbitrary: fc.constant(NONE), weight: 8 },
  { arbitrary: errorCode.map((code): Ending => ({ kind: 'error', code })), weight: 2 },
  { arbitrary: fc.constant<Ending>({ kind: 'terminate' }), weight: 1 },
  { arbitrary: escalationCode.map((code): Ending => ({ kind: 'escalation', code })), weight: 1 },
);

export function boundary(ctx: Ctx, on: 'user' | 'job' | 'sub'): fc.Arbitrary<Boundary> {
  const path = (spawned: boolean): fc.Arbitrary<Block> =>
    fc.oneof(
      { arbitrary: fc.constant(seq()), weight: 2 },
      { arbitrary: block({ ...ctx, depth: 0, spawned, bare: true }), weight: 3 },
    );
  // Both paths are generated and one kept (not chain()ed on `interrupting`): fast-check shrinks records well.
  const timer = fc
    .record({ interrupting: fc.boolean(), free: path(ctx.spawned), bound: path(true), rejoin: fc.boolean(), ending })
    .map(({ interrupting, free, bound, rejoin, ending: e }): Boundary => ({
      kind: 'timer',
      interrupting,
      then: interrupting ? free : bound,
      to: interrupting && rejoin ? 'rejoin' : 'end',
      ending: e,
    }));
  const error = fc.record({
    kind: fc.constant('error' as const),
    code: maybe(errorCode),
    then: path(ctx.spawned),
    to: fc.constantFrom('end' as const, 'rejoin' as const),
    ending,
  });
  const escalation = fc
    .record({
      code: maybe(escalationCode),
      interrupting: fc.boolean(),
      free: path(ctx.spawned),
      bound: path(true),
      rejoin: fc.boolean(),
      ending,
    })
    .map(({ code, interrupting, free, bound, rejoin, ending: e }): Boundary => ({
      kind: 'escalation',
      code,
      interrupting,
      then: interrupting ? free : bound,
      to: interrupting && rejoin ? 'rejoin' : 'end',
      ending: e,
    }));
  // Ours refuses an error boundary event on a user task, and an escalation boundary event anywhere but on a subprocess.
  if (on === 'user') return timer;
  if (on === 'job') return fc.oneof(timer, error);
  return fc.oneof(
    { arbitrary: error, weight: 3 },
    { arbitrary: timer, weight: 2 },
    { arbitrary: escalation, weight: 1 },
  );
}

const boundaries = (ctx: Ctx, on: 'user' | 'job' | 'sub'): fc.Arbitrary<readonly Boundary[]> =>
  ctx.bare === true
    ? fc.constant([])
    : fc.oneof(
        { arbitrary: fc.constant([]), weight: 3 },
        { arbitrary: fc.array(boundary(ctx, on), { minLength: 1, maxLength: 2 }), weight: 2 },
      );

function handler(ctx: Ctx): fc.Arbitrary<Handler> {
  const inner = { ...ctx, depth: Math.max(0, ctx.depth - 1), tail: true };
  return fc.oneof(
    fc.record({
      kind: fc.constant('error' as const),
      code: maybe(errorCode),
      body: block({ ...inner, handler: true }),
      ending: fc.constant(NONE),
    }),
    fc
      .record({
        code: maybe(escalationCode),
        interrupting: fc.boolean(),
        free: block({ ...inner, handler: true }),
        bound: block({ ...inner, spawned: true, handler: true }),
      })
      .map(({ code, interrupting, free, bound }): Handler => ({
        kind: 'escalation',
        code,
        interrupting,
        body: interrupting ? free : bound,
        ending: NONE,
      })),
  );
}

const handlers = (ctx: Ctx): fc.Arbitrary<readonly Handler[]> =>
  fc.oneof(
    { arbitrary: fc.constant([]), weight: 3 },
    { arbitrary: fc.array(handler(ctx), { minLength: 1, maxLength: 2 }), weight: 1 },
  );

/** A leaf that waits (a user task, a job, a timer), for loop bodies. */
export function waiting(ctx: Ctx): fc.Arbitrary<Block> {
  const leaves: fc.Arbitrary<Block>[] = [
    boundaries(ctx, 'user').map((b): Block => ({ kind: 'user', boundaries: b })),
    fc.constant<Block>({ kind: 'timer' }),
  ];
  if (!ctx.handler) leaves.push(boundaries(ctx, 'job').map((b): Block => ({ kind: 'job', boundaries: b })));
  return fc.oneof(...leaves);
}

function branches(ctx: Ctx, conditions: 'all' | 'some' | 'none'): fc.Arbitrary<Branch[]> {
  const inner = { ...ctx, depth: ctx.depth - 1, tail: false };
  const when = conditions === 'none' ? fc.constant(null) : conditions === 'all' ? flag : maybe(flag);
  const branchEnding =
    conditions !== 'all' && ctx.inLoop === true
      ? fc.constant(null)
      : fc.oneof({ arbitrary: fc.constant(null), weight: 5 }, { arbitrary: ending, weight: 1 });
  return fc.array(fc.record({ when, body: block(inner), ending: branchEnding }), { minLength: 2, maxLength: 3 });
}

/** A plain block: tasks, timers, sequences and parallel blocks (no choice, no error, no escalation, no event subprocess). */
function plainBlock(ctx: Ctx): fc.Arbitrary<Block> {
  const leaves: Weighted<Block>[] = [
    { arbitrary: fc.constant<Block>({ kind: 'pass' }), weight: 2 },
    { arbitrary: waiting({ ...ctx, bare: true }), weight: 4 },
  ];
  if (ctx.depth <= 0) return fc.oneof(...leaves);
  const inner = { ...ctx, depth: ctx.depth - 1 };
  const branch = fc.record({ when: fc.constant(null), body: plainBlock(inner), ending: fc.constant(null) });
  return fc.oneof(
    ...leaves,
    { arbitrary: fc.array(plainBlock(inner), { minLength: 2, maxLength: 3 }).map((items) => seq(...items)), weight: 2 },
    {
      arbitrary: fc
        .array(branch, { minLength: 2, maxLength: 3 })
        .map((list): Block => ({ kind: 'and', branches: list })),
      weight: 1,
    },
  );
}

export function block(ctx: Ctx): fc.Arbitrary<Block> {
  if (ctx.plain === true) return plainBlock(ctx);
  const leaves: Weighted<Block>[] = [
    { arbitrary: fc.constant<Block>({ kind: 'pass' }), weight: 2 },
    { arbitrary: escalationCode.map((code): Block => ({ kind: 'escalate', code })), weight: 1 },
  ];
  if (!ctx.spawned) leaves.push({ arbitrary: waiting(ctx), weight: 6 });
  if (ctx.depth <= 0) return fc.oneof(...leaves);
  const inner = { ...ctx, depth: ctx.depth - 1 };
  // Which branch is the default: an index (taken modulo the branches), or none.
  const otherwise = fc.oneof({ arbitrary: fc.nat({ max: 2 }), weight: 4 }, { arbitrary: fc.constant(null), weight: 1 });
  const composites: Weighted<Block>[] = [
    {
      arbitrary: fc
        .tuple(fc.array(block({ ...inner, tail: false }), { minLength: 1, maxLength: 2 }), block(inner))
        .map(([items, last]) => seq(...items, last)),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(branches(ctx, 'all'), otherwise)
        .map(([list, o]): Block => ({ kind: 'xor', branches: list, otherwise: o === null ? null : o % list.length })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(branches(ctx, 'some'), otherwise)
        .map(([list, o]): Block => ({ kind: 'or', branches: list, otherwise: o === null ? null : o % list.length })),
      weight: 1,
    },
    { arbitrary: branches(ctx, 'none').map((list): Block => ({ kind: 'and', branches: list })), weight: 2 },
    {
      arbitrary: fc
        .record({
          body: block({ ...inner, tail: true }),
          ending: fc.oneof({ arbitrary: fc.constant(NONE), weight: 4 }, { arbitrary: ending, weight: 1 }),
          boundaries: boundaries(inner, 'sub'),
          handlers: handlers(inner),
        })
        .map((sub): Block => ({ kind: 'sub', ...sub })),
      weight: 3,
    },
  ];
  if (!ctx.spawned && ctx.tail === true)
    composites.push({
      arbitrary: fc
        .record({ first: waiting(inner), rest: block({ ...inner, inLoop: true }), again: flag })
        .map(({ first, rest, again }): Block => ({ kind: 'loop', body: seq(first, rest), again })),
      weight: 1,
    });
  if (!ctx.spawned && ctx.extra !== undefined) composites.push(...ctx.extra(inner));
  return fc.oneof(...leaves, ...composites);
}

export const startVariables = fc.record(Object.fromEntries(FLAGS.map((f) => [f, fc.boolean()])));

/** A random model: a body of depth up to `depth`, process-level event subprocesses, an ending; `extra` blocks besides. */
export function randomShape(depth = 3, extra?: Ctx['extra']): fc.Arbitrary<Shape> {
  const ctx: Ctx = { depth, spawned: false, handler: false, tail: true, ...(extra === undefined ? {} : { extra }) };
  return fc.record({
    body: block(ctx),
    ending: fc.oneof({ arbitrary: fc.constant(NONE), weight: 6 }, { arbitrary: ending, weight: 1 }),
    handlers: handlers({ ...ctx, depth: 1 }),
    start: startVariables,
    origin: fc.constant('random'),
  });
}
