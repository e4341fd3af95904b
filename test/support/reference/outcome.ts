/**
 * What both engines' drivers report, in the same terms: what waits for the
 * driver (the moves it may make next), where each token went (the visits,
 * visits.ts), and how the instance stands at the end.
 */

/** Something the driver can make happen: a job done (or throwing), a user task completed, a timer fired. */
export type WaitKind = 'job' | 'user' | 'timer';

/** A wait as both drivers name it: `job:job4`, `user:user2`, `timer:boundaryTimer7`. */
export type WaitKey = `${WaitKind}:${string}`;

/** One move of a run, chosen by fast-check: which wait (by index into the sorted waits), with what. */
export interface Choice {
  readonly pick: number;
  /** Variables the job's result or the user task's completion sets. */
  readonly vars: Readonly<Record<string, boolean>>;
  /** A job throws this BPMN error code instead of completing; ignored for user tasks, timers and scoped waits. */
  readonly error: string | null;
  /**
   * What an item's job or user task returns as `done` (a completion
   * condition reads it); a scoped wait (an item's, a called instance's:
   * Graph.scoped) returns only this, never `vars`.
   */
  readonly done?: boolean;
}

/** How an instance stands when the run stops. */
export interface EndState {
  /** completed: nothing left; running: waits left; failed: an incident (ours) or an error (bpmn-engine) stopped it. */
  readonly status: 'completed' | 'running' | 'failed';
  readonly waits: readonly WaitKey[];
  /** The elements where it failed (an incident's or an error's element), sorted. */
  readonly failedAt: readonly string[];
  /** Why, in words (incident reasons and messages, the error): for the report only. */
  readonly detail: readonly string[];
}

/**
 * One element passed: `from` are the visits whose flows brought the token
 * (several at a join; none at a start event, a subprocess's start, a
 * boundary event, an event subprocess and its start).
 */
export interface Visit {
  readonly element: string;
  readonly from: number[];
}

/** A driver of one engine over one model (async: the store's driver works through Firestore). */
export interface EngineDriver {
  /** The waits the driver may complete now, sorted. */
  waits(): Promise<WaitKey[]>;
  /**
   * Completes a wait: a job with `vars` (or throwing `error`), a user task
   * with `vars`, a timer. A `scoped` wait (Graph.scoped) returns `{ done }`
   * only and throws nothing.
   */
  act(wait: WaitKey, choice: Choice, scoped: boolean): Promise<void>;
  /** Every element passed so far, in the order first entered. */
  visits(): Visit[];
  end(): Promise<EndState>;
  /** What the driver noticed on the way (bpmn-engine: joins that counted a discarded flow). */
  notes(): readonly string[];
  /** Whether the engine was stopped as looping. */
  readonly looped: boolean;
}

/** What a move sets: an unscoped wait's variables, or a scoped one's `done` only. */
export const resultOf = (choice: Choice, scoped: boolean): Readonly<Record<string, unknown>> =>
  scoped ? { done: choice.done === true } : choice.vars;

/** The engine looped: it passed more elements in one move than any model here needs. */
export class Looped extends Error {
  override readonly name = 'Looped';
}
