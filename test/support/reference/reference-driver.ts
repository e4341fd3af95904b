/**
 * bpmn-engine (npm, MIT; elements from bpmn-elements) as the reference side
 * of the differential test, driven like ours:
 *
 * - a service task calls the `job` service, which keeps its callback: the
 *   job waits until the driver completes it (callback with no error) or
 *   throws a BPMN error (an error with `code`, which an error boundary event
 *   with that errorCode catches);
 * - a user task waits (`activity.wait`) until the driver signals it;
 * - timers never run on the clock: `ManualTimers` keeps every timeout and
 *   the driver fires the one it chooses;
 * - the driver sets variables in one object `v` that every scope's copy of
 *   the environment shares (xml.ts writes conditions over `v`).
 *
 * Everything bpmn-engine does runs synchronously inside execute(), a
 * signal or a callback, so after each move the state is settled. A model
 * that loops is stopped after {@link REFERENCE_ACTIVATION_LIMIT} element
 * activations and reported as looped.
 */
import { EventEmitter } from 'node:events';
import { type BpmnEngineOptions, Engine } from 'bpmn-engine';
import { ManualTimers } from './manual-timers';
import { ReferenceWaits } from './reference-waits';
import { ancestors, type Api, type Parent, ReferenceVisits } from './reference-visits';
import { type Choice, type EndState, type EngineDriver, resultOf, type Visit, type WaitKey } from './outcome';

/** Thrown out of bpmn-engine's run by the activation limit. */
class ReferenceLooped extends Error {}

const SILENT = { debug: () => undefined, error: () => undefined, warn: () => undefined };

/** Element activations after which bpmn-engine is stopped and the run reported as "reference looped". */
export const REFERENCE_ACTIVATION_LIMIT = 1_000;

export class ReferenceDriver implements EngineDriver {
  private readonly timers = new ManualTimers();
  private readonly waiting = new ReferenceWaits();
  private readonly trace = new ReferenceVisits();
  private readonly variables: Record<string, unknown>;
  private engine: Engine | null = null;
  private activations = 0;
  looped = false;
  /** The instance's failure: bpmn-engine's error event (an error nothing caught), or a throw out of a move. */
  private readonly errors: { element: string; message: string }[] = [];
  /** Activities that errored in the current move, innermost first (an error bubbles up through each enclosing subprocess; a caught one errors too). */
  private erroredInMove: string[] = [];

  private constructor(start: Readonly<Record<string, unknown>>) {
    this.variables = { ...start };
  }

  static async start(xml: string, variables: Readonly<Record<string, unknown>>): Promise<ReferenceDriver> {
    const driver = new ReferenceDriver(variables);
    const listener = new EventEmitter();
    listener.on('activity.start', (api: Api) => driver.started(api));
    listener.on('activity.end', (api: Api) => driver.ended(api));
    listener.on('activity.wait', (api: Api & { signal: (message?: unknown) => void }) => {
      // The wait's own api signals it (execution.signal({ id }) is delegated, and then bpmn-engine lets an error
      // end event right after the task escape its subprocess's error boundary event).
      if (api.type === 'bpmn:UserTask')
        driver.waiting.users.push({
          element: api.id,
          executionId: api.executionId,
          within: ancestors(api.content.parent),
          signal: (m) => api.signal(m),
        });
    });
    for (const event of ['activity.leave', 'activity.discard', 'process.leave'])
      listener.on(event, (api: Api) => driver.waiting.left(api.executionId));
    listener.on('activity.stop', (api: Api) => driver.waiting.stopped(api.id));
    listener.on('activity.error', (api: Api) => driver.erroredInMove.push(api.id));
    const engine = new Engine({
      name: 'reference',
      // No debug logger: creating one per element costs more than the run.
      Logger: () => SILENT,
      source: xml,
      // The interface bpmn-elements calls (register, setTimeout, clearTimeout), not its Timer records.
      timers: driver.timers as unknown as NonNullable<BpmnEngineOptions['timers']>,
      services: {
        // A completion condition `at least n + 1 items ended`, from the index of the item that ended (xml.ts).
        atLeast: (index: unknown, n: unknown) => Number(index) >= Number(n),
        job: (
          scope: { content: { id: string; executionId: string; parent?: Parent } },
          callback: (err: Error | null, result?: unknown) => void,
        ) => {
          const { id, executionId, parent } = scope.content;
          driver.waiting.jobs.push({ element: id, executionId, within: ancestors(parent), callback });
        },
      },
    });
    driver.engine = engine;
    engine.on('error', (err: Error & { source?: { content?: { id?: string } } }) =>
      driver.errors.push({ element: driver.erroredInMove[0] ?? err.source?.content?.id ?? '?', message: err.message }),
    );
    try {
      await engine.execute({ listener, variables: { v: driver.variables } });
    } catch (err) {
      driver.failed('(start)', err);
    }
    return driver;
  }

  private started(api: Api): void {
    if (this.looped) return;
    this.activations += 1;
    if (this.activations > REFERENCE_ACTIVATION_LIMIT) {
      this.looped = true;
      // Out of the synchronous run at once (stop() would take effect only when it unwinds, if ever); the engine is dropped.
      throw new ReferenceLooped();
    }
    this.trace.started(api);
  }

  private ended(api: Api): void {
    if (!this.looped) this.trace.ended(api);
    this.waiting.left(api.executionId);
  }

  /** bpmn-engine's state: idle (done), running, stopped or error. */
  private get state(): string {
    return String(this.engine?.state ?? 'not started');
  }

  private get done(): boolean {
    return this.looped || this.errors.length > 0;
  }

  notes(): readonly string[] {
    return this.trace.discards;
  }

  async waits(): Promise<WaitKey[]> {
    return this.waitsNow();
  }

  private waitsNow(): WaitKey[] {
    // Done (completed, or ended by a terminate end event, which stops the jobs' activities without leaving them).
    if (this.done || this.state === 'idle') return [];
    const timers = this.timers.pending.flatMap((t): WaitKey[] =>
      t.owner?.id === undefined ? [] : [`timer:${t.owner.id}`],
    );
    return [
      ...this.waiting.jobs.map((j): WaitKey => `job:${j.element}`),
      ...this.waiting.users.map((u): WaitKey => `user:${u.element}`),
      ...timers,
    ].sort();
  }

  async act(wait: WaitKey, choice: Choice, scoped: boolean): Promise<void> {
    this.actNow(wait, choice, scoped);
    return Promise.resolve();
  }

  /**
   * An unscoped wait sets its variables in the shared `v`; a scoped one (an
   * item's, a called instance's) only returns `{ done }`: as the service's
   * callback argument or the signal's message, the output a multi-instance
   * activity's completion condition reads (xml.ts).
   */
  private actNow(wait: WaitKey, choice: Choice, scoped: boolean): void {
    const [kind, element] = wait.split(':') as [string, string];
    const result = resultOf(choice, scoped);
    this.erroredInMove = [];
    try {
      if (kind === 'job') {
        const job = this.waiting.take(this.waiting.jobs, element);
        if (job === undefined) throw new Error(`no job at ${element}`);
        if (choice.error !== null && !scoped)
          return job.callback(Object.assign(new Error(choice.error), { code: choice.error }));
        if (!scoped) Object.assign(this.variables, result);
        return job.callback(null, result);
      }
      if (kind === 'user') {
        // Taken off here: a multi-instance activity's item ends without a leave of its own.
        const user = this.waiting.take(this.waiting.users, element);
        if (user === undefined) throw new Error(`no user task at ${element}`);
        if (!scoped) Object.assign(this.variables, result);
        user.signal(result);
        return;
      }
      const timer = this.timers.pending.find((t) => t.owner?.id === element);
      if (timer === undefined) throw new Error(`no timer of ${element}`);
      this.timers.clearTimeout(timer);
      timer.callback(...timer.args);
    } catch (err) {
      this.failed(element, err);
    }
  }

  /** bpmn-engine threw out of a move: a loop that ran out of stack before the activation limit is a loop, anything else a failure. */
  private failed(element: string, err: unknown): void {
    if (err instanceof ReferenceLooped || (err instanceof RangeError && /call stack/.test(err.message))) {
      this.looped = true;
      return;
    }
    this.errors.push({ element, message: `bpmn-engine threw: ${(err as Error).message}` });
  }

  visits(): Visit[] {
    return this.trace.visits();
  }

  async end(): Promise<EndState> {
    return this.endNow();
  }

  private endNow(): EndState {
    if (this.looped)
      return {
        status: 'failed',
        waits: [],
        failedAt: [],
        detail: [`looped: stopped after ${REFERENCE_ACTIVATION_LIMIT} activations`],
      };
    if (this.errors.length > 0)
      return {
        status: 'failed',
        waits: [],
        failedAt: [...new Set(this.errors.map((e) => e.element))].sort(),
        detail: this.errors.map((e) => `${e.element}: ${e.message}`),
      };
    const waits = this.waitsNow();
    const completed = this.state === 'idle' && waits.length === 0;
    const stalled = completed || waits.length > 0 ? [] : [`stalled: ${this.postponed().join(', ')}`];
    return {
      status: completed ? 'completed' : 'running',
      waits,
      failedAt: [],
      detail: [`engine ${this.state}`, ...stalled],
    };
  }

  /** What bpmn-engine holds on to when nothing waits for the driver: elements and sequence flows (a flow into a join it never consumed). */
  private postponed(): string[] {
    interface Postponed {
      readonly id: string;
      getPostponed?: () => Postponed[];
    }
    const ids: string[] = [];
    const walk = (list: readonly Postponed[], depth: number): void => {
      for (const p of list) {
        ids.push(p.id);
        if (depth < 20) walk(p.getPostponed?.() ?? [], depth + 1);
      }
    };
    walk(this.engine?.execution.getPostponed() ?? [], 0);
    return [...new Set(ids)];
  }
}
