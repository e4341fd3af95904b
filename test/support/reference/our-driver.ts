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
import { type Choice, type EndState, type EngineDriver, Looped, type Visit, type WaitKey } from './outcome';
import { OurVisits } from './our-visits';

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
    this.trace = new OurVisits(() => model);
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

  waits(): WaitKey[] {
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

  act(wait: WaitKey, choice: Choice): void {
    const [kind, element] = wait.split(':') as [string, string];
    this.move(() => {
      if (kind === 'job' && choice.error !== null) this.sim.throwAt(element, choice.error);
      else if (kind === 'job') this.sim.finishJob(element, choice.vars);
      else if (kind === 'user') this.sim.completeTask(element, choice.vars);
      else this.sim.fire(element);
    });
  }

  visits(): Visit[] {
    return this.trace.visits();
  }

  end(): EndState {
    const instance = this.sim.instance;
    const incidents = (instance?.incidents ?? []).filter(isOpenIncident);
    const waits = this.waits();
    const live = this.sim.live();
    // Checked on our side alone, whatever bpmn-engine does: a completed instance has no token left.
    const inconsistent =
      instance?.status === 'COMPLETED' && live.length > 0
        ? [`INCONSISTENT: the instance is COMPLETED with live tokens at ${live.map((t) => t.activityId).join(', ')}`]
        : [];
    return {
      status: incidents.length > 0 ? 'failed' : instance?.status === 'COMPLETED' ? 'completed' : 'running',
      waits,
      failedAt: [...new Set(incidents.map((i) => i.activityId))].sort(),
      detail: [...incidents.map((i) => `${i.reason} at ${i.activityId}: ${i.message}`), ...inconsistent],
    };
  }
}
