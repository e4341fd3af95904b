/**
 * The capacity search of `npm run bench:relay`: the highest publish rate the
 * local stack sustains, so the latency targets are judged below saturation
 * (at 80 % of it) on any machine, not at a fixed rate that may be above what
 * the machine can do.
 *
 * A step publishes `rate × window` completions, paced, and watches the
 * backlog of unfinished work orders (published, invoice job not yet
 * finished) every half second. The backlog of a rate the stack keeps up with
 * levels off at about rate × latency; above capacity it grows for the whole
 * window. A step is sustained when, over the second half of its window, the
 * backlog grew by at most 5 % of what was published in that half (+2 for
 * jitter) and the stack finished at least 95 % of the offered rate. The
 * first version allowed 10 % growth alone, and called 55/s sustained with
 * the backlog going 176 -> 211 and 51.4/s finished: a 20 s window at a rate
 * 7 % above what the stack finishes. Between steps the backlog drains.
 * Rates double until a step fails, then bisect.
 *
 * Progress comes from the Cloud Tasks emulator's dispatch log (in this
 * process): a completed dispatch of an invoice job is a finished work order.
 * Reading it costs the stack nothing, unlike polling Firestore, which would
 * load the very emulator being measured.
 */
/** One step of the search. */
export interface CapacityStep {
  readonly rate: number;
  readonly published: number;
  /** Unfinished work orders at the middle and at the end of the publish window. */
  readonly backlogMid: number;
  readonly backlogEnd: number;
  /** Backlog growth over the second half, per second. */
  readonly growthPerSecond: number;
  /** Work orders finished per second over the second half. */
  readonly finishedPerSecond: number;
  readonly sustained: boolean;
  /** From the last publish until the backlog was empty, ms; null if it did not drain within the limit. */
  readonly drainMs: number | null;
}

export interface CapacityResult {
  /** The highest rate a step sustained (0 if none did). */
  readonly sustainedPerSecond: number;
  /** The lowest rate a step did not sustain, null if every step did. */
  readonly failedPerSecond: number | null;
  readonly windowSeconds: number;
  readonly steps: readonly CapacityStep[];
  readonly criterion: string;
}

export interface CapacityProbe {
  /** Makes `count` fresh waiting work orders; returns their ids (untimed). */
  readonly prepare: (step: number, count: number) => Promise<string[]>;
  /** Publishes their completions, paced at `rate` per second. */
  readonly publish: (ids: readonly string[], rate: number) => Promise<unknown>;
  /** Work orders finished so far (cumulative, any step). */
  readonly finished: () => number;
  readonly windowSeconds: number;
  readonly startRate: number;
  readonly maxSteps: number;
  readonly drainLimitMs: number;
  readonly progress: (line: string) => void;
}

export const CAPACITY_CRITERION =
  'over the second half of the window, the backlog of unfinished work orders grew by at most 5 % of the messages published (+2) and at least 95 % of the offered rate finished';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One step at `rate`: publish for the window, sample the backlog, wait for it to drain. */
async function step(p: CapacityProbe, index: number, rate: number): Promise<CapacityStep> {
  const count = Math.max(4, Math.round(rate * p.windowSeconds));
  const ids = await p.prepare(index, count);
  const base = p.finished();
  const samples: Array<{ at: number; backlog: number; finished: number }> = [];
  const started = Date.now();
  // Published by time t on the pacing schedule (message i is due at i / rate s).
  const publishedBy = (t: number): number => Math.min(count, Math.floor(((t - started) * rate) / 1000) + 1);
  const sampler = setInterval(() => {
    const at = Date.now();
    const finished = p.finished() - base;
    samples.push({ at, backlog: publishedBy(at) - finished, finished });
  }, 500);
  try {
    await p.publish(ids, rate);
  } finally {
    clearInterval(sampler);
  }
  const ended = Date.now();
  const half = samples.filter((s) => s.at >= started + (ended - started) / 2);
  const mid = half[0] ?? { at: started, backlog: 0, finished: 0 };
  const end = samples.at(-1) ?? mid;
  const seconds = Math.max(0.001, (end.at - mid.at) / 1000);
  const publishedInHalf = publishedBy(end.at) - publishedBy(mid.at);
  const growth = end.backlog - mid.backlog;
  const finishedPerSecond = (end.finished - mid.finished) / seconds;
  const sustained = growth <= 0.05 * publishedInHalf + 2 && finishedPerSecond >= 0.95 * rate;
  let drainMs: number | null = null;
  for (const deadline = Date.now() + p.drainLimitMs; Date.now() < deadline; await sleep(200)) {
    if (p.finished() - base >= count) {
      drainMs = Date.now() - ended;
      break;
    }
  }
  const result: CapacityStep = {
    rate,
    published: count,
    backlogMid: mid.backlog,
    backlogEnd: end.backlog,
    growthPerSecond: Math.round((growth / seconds) * 10) / 10,
    finishedPerSecond: Math.round(finishedPerSecond * 10) / 10,
    sustained,
    drainMs,
  };
  p.progress(
    `capacity: ${rate}/s ${sustained ? 'sustained' : 'NOT sustained'} (backlog ${mid.backlog} -> ${end.backlog} over the second half, finished ${result.finishedPerSecond}/s; drained ${drainMs === null ? 'not within the limit' : `in ${drainMs} ms`})`,
  );
  return result;
}

/** Doubles from `startRate` until a step fails, then bisects; stops at 10 % resolution or `maxSteps`. */
export async function findCapacity(p: CapacityProbe): Promise<CapacityResult> {
  const steps: CapacityStep[] = [];
  let lo = 0;
  let hi: number | null = null;
  let rate = p.startRate;
  for (let i = 0; i < p.maxSteps; i++) {
    const s = await step(p, i, rate);
    steps.push(s);
    if (s.sustained) lo = rate;
    else hi = rate;
    if (hi !== null && hi - lo <= Math.max(1, 0.1 * Math.max(lo, 1))) break;
    rate = hi === null ? rate * 2 : Math.round(((lo + hi) / 2) * 10) / 10;
  }
  return {
    sustainedPerSecond: lo,
    failedPerSecond: hi,
    windowSeconds: p.windowSeconds,
    steps,
    criterion: CAPACITY_CRITERION,
  };
}
