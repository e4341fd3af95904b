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
  /** A job throws this BPMN error code instead of completing; ignored for user tasks and timers. */
  readonly error: string | null;
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

/** A driver of one engine over one model. */
export interface EngineDriver {
  /** The waits the driver may complete now, sorted. */
  waits(): WaitKey[];
  /** Completes a wait: a job with `vars` (or throwing `error`), a user task with `vars`, a timer. */
  act(wait: WaitKey, choice: Choice): void;
  /** Every element passed so far, in the order first entered. */
  visits(): Visit[];
  end(): EndState;
}

/** The engine looped: it passed more elements in one move than any model here needs. */
export class Looped extends Error {
  override readonly name = 'Looped';
}
