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
import { type Choice, type EndState, type EngineDriver, type Visit, type WaitKey } from './outcome';

/** Thrown out of bpmn-engine's run by the activation limit. */
class ReferenceLooped extends Error {}

const SILENT = { debug: () => undefined, error: () => undefined, warn: () => undefined };

/** Element activations after which bpmn-engine is stopped and the run reported as "reference looped". */
export const REFERENCE_ACTIVATION_LIMIT = 1_000;

interface TimerRef {
  readonly owner: { readonly id?: string; readonly executionId?: string } | null;
  readonly callback: (...args: unknown[]) => unknown;
  readonly args: unknown[];
}

/** bpmn-elements' Timers interface, with timeouts that run only when the driver fires them. */
class ManualTimers {
  readonly pending: TimerRef[] = [];
  register(owner: TimerRef['owner']) {
    return {
      setTimeout: (callback: TimerRef['callback'], _delay: number, ...args: unknown[]) =>
        this.add(owner, callback, args),
      clearTimeout: (ref: TimerRef) => this.clearTimeout(ref),
    };
  }
  setTimeout = (callback: TimerRef['callback'], _delay: number, ...args: unknown[]): TimerRef =>
    this.add(null, callback, args);
  clearTimeout = (ref: TimerRef | undefined): undefined => {
    const i = ref === undefined ? -1 : this.pending.indexOf(ref);
    if (i >= 0) this.pending.splice(i, 1);
    return undefined;
  };
  get executing(): TimerRef[] {
    return [...this.pending];
  }
  private add(owner: TimerRef['owner'], callback: TimerRef['callback'], args: unknown[]): TimerRef {
    const ref = { owner, callback, args };
    this.pending.push(ref);
    return ref;
  }
}

interface Api {
  readonly id: string;
  readonly type: string;
  readonly executionId: string;
  readonly content: {
    readonly inbound?: readonly {
      readonly action?: string;
      readonly evaluationId?: string;
      readonly id?: string;
      readonly discardSequence?: readonly string[];
    }[];
    readonly isMultiInstance?: boolean;
  };
}

interface PendingJob {
  readonly element: string;
  readonly executionId: string;
  readonly callback: (err: Error | null, result?: unknown) => void;
}

export class ReferenceDriver implements EngineDriver {
  private readonly timers = new ManualTimers();
  private readonly jobs: PendingJob[] = [];
  private readonly users: { element: string; executionId: string; signal: (message?: unknown) => void }[] = [];
  private readonly list: Visit[] = [];
  private readonly byExecution = new Map<string, number>();
  /** Boundary events waiting with their activity (their end event names the event definition's type, not theirs). */
  private readonly boundaryRuns = new Set<string>();
  private readonly variables: Record<string, unknown>;
  private engine: Engine | null = null;
  private activations = 0;
  looped = false;
  /** Joins that went on counting a discarded flow as arrived (`discard into J from A>B`, the discard's way). */
  readonly discards: string[] = [];
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
        driver.users.push({ element: api.id, executionId: api.executionId, signal: (m) => api.signal(m) });
    });
    listener.on('activity.leave', (api: Api) => driver.left(api.executionId));
    // A terminate end event stops its scope's activities (no leave; the stop names the element only).
    listener.on('activity.stop', (api: Api) => driver.stopped(api.id));
    listener.on('activity.error', (api: Api) => driver.erroredInMove.push(api.id));
    const engine = new Engine({
      name: 'reference',
      // No debug logger: creating one per element costs more than the run.
      Logger: () => SILENT,
      source: xml,
      // The interface bpmn-elements calls (register, setTimeout, clearTimeout), not its Timer records.
      timers: driver.timers as unknown as NonNullable<BpmnEngineOptions['timers']>,
      services: {
        job: (scope: { content: { id: string; executionId: string } }, callback: PendingJob['callback']) => {
          driver.jobs.push({ element: scope.content.id, executionId: scope.content.executionId, callback });
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
    if (api.type === 'bpmn:BoundaryEvent') return void this.boundaryRuns.add(api.executionId);
    if (this.byExecution.has(api.executionId)) return;
    const inbound = api.content.inbound ?? [];
    // A join that went on with a discarded flow among its arrivals (dead-path elimination): noted with where the discard began.
    if (inbound.some((f) => f.action === 'take'))
      for (const f of inbound)
        if (f.action === 'discard')
          this.discards.push(`discard into ${api.id} from ${(f.discardSequence ?? []).join('>')}`);
    const from = inbound.flatMap((flow) => {
      const source = flow.action === 'take' ? this.byExecution.get(flow.evaluationId ?? '') : undefined;
      return source === undefined ? [] : [source];
    });
    this.add(api, from);
  }

  private ended(api: Api): void {
    // A boundary event starts with its activity and waits; it was passed only when it was triggered.
    if (this.boundaryRuns.delete(api.executionId) && !this.looped) this.add(api, []);
    this.left(api.executionId);
  }

  private add(api: Api, from: number[]): void {
    this.list.push({ element: api.id, from });
    this.byExecution.set(api.executionId, this.list.length - 1);
  }

  private left(executionId: string): void {
    const user = this.users.findIndex((u) => u.executionId === executionId);
    if (user >= 0) this.users.splice(user, 1);
    const job = this.jobs.findIndex((j) => j.executionId === executionId);
    if (job >= 0) this.jobs.splice(job, 1);
  }

  /** bpmn-engine's state: idle (done), running, stopped or error. */
  private get state(): string {
    return String(this.engine?.state ?? 'not started');
  }

  /** Every wait at `element` goes (no element is ever reached by two tokens at once: generate.ts). */
  private stopped(element: string): void {
    for (const list of [this.users, this.jobs] as { element: string }[][])
      for (let i = list.length - 1; i >= 0; i--) if (list[i]?.element === element) list.splice(i, 1);
  }

  private get done(): boolean {
    return this.looped || this.errors.length > 0;
  }

  waits(): WaitKey[] {
    // Done (completed, or ended by a terminate end event, which stops the jobs' activities without leaving them).
    if (this.done || this.state === 'idle') return [];
    const timers = this.timers.pending.flatMap((t): WaitKey[] =>
      t.owner?.id === undefined ? [] : [`timer:${t.owner.id}`],
    );
    return [
      ...this.jobs.map((j): WaitKey => `job:${j.element}`),
      ...this.users.map((u): WaitKey => `user:${u.element}`),
      ...timers,
    ].sort();
  }

  act(wait: WaitKey, choice: Choice): void {
    const [kind, element] = wait.split(':') as [string, string];
    this.erroredInMove = [];
    try {
      if (kind === 'job') {
        const i = this.jobs.findIndex((j) => j.element === element);
        const [job] = this.jobs.splice(i, 1);
        if (job === undefined) throw new Error(`no job at ${element}`);
        if (choice.error !== null) return job.callback(Object.assign(new Error(choice.error), { code: choice.error }));
        Object.assign(this.variables, choice.vars);
        return job.callback(null, {});
      }
      if (kind === 'user') {
        const user = this.users.find((u) => u.element === element);
        if (user === undefined) throw new Error(`no user task at ${element}`);
        Object.assign(this.variables, choice.vars);
        user.signal({});
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
    return this.list.map((v) => ({ element: v.element, from: [...v.from] }));
  }

  end(): EndState {
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
    const waits = this.waits();
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
    return ids;
  }
}
