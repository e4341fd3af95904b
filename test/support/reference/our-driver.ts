/**
 * Our engine's pure core as one side of the differential test: the model
 * parsed by our parser, run by CoreSim (test/support/core-sim.ts) the way
 * the store runs it, every move traced (our-trace.ts, imported first so its
 * hook is in place before the engine loads).
 */
import { assertTracing, recording, type TraceEvent } from './our-trace';
import type { ProcessModel } from '../../../functions/src/bpmn/model';
import { parseProcessModel } from '../../../functions/src/bpmn/parse-model';
import { isOpenIncident } from '../../../functions/src/engine/state';
import { timerIsLive } from '../../../functions/src/engine/timer-transitions';
import { CoreSim } from '../core-sim';
import { type Choice, type EndState, type EngineDriver, Looped, resultOf, type Visit, type WaitKey } from './outcome';
import { OurVisits } from './our-visits';

/** The detail of a PENDING timer whose token left it (known.ts recognises it). */
export const staleTimer = (activityId: string): string =>
  `INCONSISTENT: timer ${activityId} is still PENDING though its token left without it`;

/** More node entries than this in one move: the engine is looping (the hook stops it by throwing). */
export const OUR_ENTRY_LIMIT = 50_000;

export class OurDriver implements EngineDriver {
  private readonly trace: OurVisits;
  private readonly events: TraceEvent[] = [];
  private limit = OUR_ENTRY_LIMIT;

  private constructor(
    readonly model: ProcessModel,
    private readonly sim: CoreSim,
  ) {
    this.trace = new OurVisits((key) => (key === model.key ? model : null));
  }

  /** Parses the model (a ModelError: ours refused it) and starts an instance with `variables`. */
  static async start(xml: string, variables: Readonly<Record<string, unknown>>): Promise<OurDriver> {
    const model = await parseProcessModel(xml);
    const driver = new OurDriver(model, new CoreSim(model));
    driver.move(() => driver.sim.start(variables));
    if (model.startEventId !== null) assertTracing(driver.events, model.startEventId);
    return driver;
  }

  private move(fn: () => void): void {
    this.limit = this.trace.entries + OUR_ENTRY_LIMIT;
    recording((e) => {
      if (this.events.length < 10) this.events.push(e);
      this.trace.on(e);
      if (this.trace.entries > this.limit)
        throw new Looped(`our engine entered ${OUR_ENTRY_LIMIT} elements in one move`);
    }, fn);
  }

  readonly looped = false;

  notes(): readonly string[] {
    return [];
  }

  async waits(): Promise<WaitKey[]> {
    return this.waitsNow();
  }

  private waitsNow(): WaitKey[] {
    const jobs = this.sim.pendingJobs().map((j): WaitKey => `job:${j.activityId}`);
    const users = this.sim.openTasks().map((u): WaitKey => `user:${u.activityId}`);
    const timers = [...this.sim.timers.values()]
      .filter((t) => {
        const token = this.sim.tokens[t.executionId];
        return token !== undefined && this.sim.live().includes(token) && timerIsLive(token, t);
      })
      .map((t): WaitKey => `timer:${t.activityId}`);
    return [...jobs, ...users, ...timers].sort();
  }

  async act(wait: WaitKey, choice: Choice, scoped: boolean): Promise<void> {
    const [kind, element] = wait.split(':') as [string, string];
    const result = resultOf(choice, scoped);
    this.move(() => {
      if (kind === 'job' && choice.error !== null && !scoped) this.sim.throwAt(element, choice.error);
      else if (kind === 'job') this.sim.finishJob(element, result);
      else if (kind === 'user') this.sim.completeTask(element, result);
      else this.sim.fire(element);
    });
  }

  visits(): Visit[] {
    return this.trace.visits();
  }

  async end(): Promise<EndState> {
    const instance = this.sim.instance;
    const incidents = (instance?.incidents ?? []).filter(isOpenIncident);
    const waits = this.waitsNow();
    const live = this.sim.live();
    // Checked on our side alone, whatever bpmn-engine does: a completed instance has no token left, and a
    // PENDING timer belongs to a live token that lists it (state.ts: deleted when its token leaves without it).
    const stale = [...this.sim.timers.values()].filter(
      (t) =>
        t.status === 'PENDING' && !live.some((token) => token.id === t.executionId && token.timerIds?.includes(t.id)),
    );
    const inconsistent = [
      ...(instance?.status === 'COMPLETED' && live.length > 0
        ? [`INCONSISTENT: the instance is COMPLETED with live tokens at ${live.map((t) => t.activityId).join(', ')}`]
        : []),
      ...stale.map((t) => staleTimer(t.activityId)),
    ];
    return {
      status: incidents.length > 0 ? 'failed' : instance?.status === 'COMPLETED' ? 'completed' : 'running',
      waits,
      failedAt: [...new Set(incidents.map((i) => i.activityId))].sort(),
      detail: [...incidents.map((i) => `${i.reason} at ${i.activityId}: ${i.message}`), ...inconsistent],
    };
  }
}
