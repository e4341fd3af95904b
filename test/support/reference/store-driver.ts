/**
 * Our engine through its Firestore store (on the emulator) as one side of
 * the differential test: what call activities and multi-instance activities
 * need, since a called instance and each item are instances of their own
 * (engine/store/calls.ts, items.ts), which CoreSim does not run. Each move
 * is the store operation the functions run (a job's completion or BPMN
 * error, a user task's completion, a timer's firing), traced like the pure
 * core (our-trace.ts). What waits is read back from Firestore: the jobs in
 * the instance documents of the run's business key (a called instance and
 * an item carry their caller's), its open user tasks and pending timers.
 */
import './our-trace';
import type { Firestore } from '@google-cloud/firestore';
import { parseProcessModel } from '../../../functions/src/bpmn/parse-model';
import { Engine } from '../../../functions/src/engine/engine';
import {
  type ExecutionState,
  type InstanceState,
  isOpenIncident,
  type JobState,
} from '../../../functions/src/engine/state';
import { asInstance, COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { completeJobRun } from '../../../functions/src/engine/store/complete-job';
import { completeUserTaskRun } from '../../../functions/src/engine/store/complete-user-task';
import { STORED } from '../../../functions/src/engine/store/converters';
import { fireTimerRun } from '../../../functions/src/engine/store/fire-timer';
import { instanceJobs, instanceTokens } from '../../../functions/src/engine/store/instance-doc';
import { throwJobError } from '../../../functions/src/engine/store/job-error';
import { startProcessInstance } from '../../../functions/src/engine/store/start-instance';
import type { Graph } from './graph';
import { type Choice, type EndState, type EngineDriver, resultOf, type Visit, type WaitKey } from './outcome';
import { assertTracing, recordingAsync, type TraceEvent } from './our-trace';
import { staleTimer } from './our-driver';
import { OurVisits } from './our-visits';
import { calleeXml, modelXml } from './xml';

const HOUR = 3_600_000;
/** The run's clock: a fixed start, two hours on per move (every timer, set an hour ahead, is due by the next move). */
const START = Date.parse('2026-12-01T09:00:00Z');

/** One thing that waits, as the store holds it. */
interface Waiting {
  readonly key: WaitKey;
  /** Among waits of one key: the item's index (the lowest goes first, as in bpmn-engine), else 0. */
  readonly order: number;
  readonly act: (now: Date, choice: Choice, scoped: boolean) => Promise<unknown>;
}

export class StoreDriver implements EngineDriver {
  readonly looped = false;
  private readonly trace: OurVisits;
  /** Trace events seen, by what makes them one: a unit of work that runs again repeats its transitions exactly. */
  private readonly seen = new Set<string>();
  private moves = 0;
  /** Timers found PENDING though their token left without them (our-driver.ts, staleTimer). */
  private readonly stale = new Set<string>();
  private first: TraceEvent[] = [];

  private constructor(
    private readonly db: Firestore,
    private readonly engine: Engine,
    private readonly businessKey: string,
  ) {
    this.trace = new OurVisits((key) => engine.deployed(key));
  }

  /** Loads the model and its callees (a ModelError: ours refused them) and starts an instance with business key `businessKey`. */
  static async start(db: Firestore, graph: Graph, businessKey: string): Promise<StoreDriver> {
    const models = [await parseProcessModel(modelXml(graph, 'ours'))];
    for (const callee of graph.callees) models.push(await parseProcessModel(calleeXml(graph, callee)));
    const jobs = graph.nodes.filter((n) => n.kind === 'job').map((n) => n.id);
    const driver = new StoreDriver(db, new Engine(models, {}, new Set(jobs), null), businessKey);
    await driver.traced(() =>
      startProcessInstance(db, driver.engine, {
        processKey: models[0]?.key ?? 'p',
        businessKey,
        variables: { ...graph.start },
        now: new Date(START),
      }),
    );
    const main = models[0];
    if (main?.startEventId !== undefined && main.startEventId !== null) assertTracing(driver.first, main.startEventId);
    return driver;
  }

  private async traced(fn: () => Promise<unknown>): Promise<void> {
    await recordingAsync((e) => {
      const key = `${e.instance}/${e.token}/${e.kind}/${e.step}/${e.node}`;
      if (this.seen.has(key)) return;
      this.seen.add(key);
      if (this.first.length < 10) this.first.push(e);
      this.trace.on(e);
    }, fn);
  }

  /** The instances of the run: the started one, its called instances and its items (they carry its business key). */
  private async instances(): Promise<
    { instance: InstanceState; tokens: ExecutionState[]; jobs: JobState[]; waitingJobs: JobState[] }[]
  > {
    const snap = await this.db
      .collection(COLLECTIONS.instances)
      .where('businessKey', '==', this.businessKey)
      .withConverter(STORED)
      .get();
    return snap.docs.map((d) => {
      const data = d.data();
      const tokens = instanceTokens(data);
      const jobs = instanceJobs(data);
      const waitingJobs = jobs.filter(
        (j) =>
          j.status === 'PENDING' &&
          tokens.some((t) => t.id === j.executionId && t.status === 'WAITING_JOB' && t.jobId === j.id),
      );
      return { instance: asInstance(data), tokens, jobs, waitingJobs };
    });
  }

  private async waiting(): Promise<Waiting[]> {
    const instances = (await this.instances()).filter((i) => i.instance.terminated === undefined);
    const orderOf = (id: string): number =>
      instances.find((i) => i.instance.id === id)?.instance.calledBy?.item?.index ?? 0;
    const found: Waiting[] = [];
    for (const { waitingJobs } of instances)
      for (const job of waitingJobs)
        found.push({
          key: `job:${job.activityId}`,
          order: orderOf(job.processInstanceId),
          act: (now, choice, scoped) =>
            choice.error !== null && !scoped
              ? throwJobError(this.db, this.engine, job, { code: choice.error, message: choice.error }, now)
              : completeJobRun(this.db, this.engine, job, resultOf(choice, scoped), now),
        });
    const tasks = await this.db
      .collection(COLLECTIONS.userTasks)
      .where('businessKey', '==', this.businessKey)
      .where('status', '==', 'OPEN')
      .get();
    for (const doc of tasks.docs) {
      const task = doc.data() as { id: string; activityId: string; processInstanceId: string };
      found.push({
        key: `user:${task.activityId}`,
        order: orderOf(task.processInstanceId),
        act: (now, choice, scoped) =>
          completeUserTaskRun(
            this.db,
            this.engine,
            {
              userTaskId: task.id,
              variables: resultOf(choice, scoped),
              by: 'reference-test',
              requestId: `r-${task.id}`,
            },
            now,
          ),
      });
    }
    const ids = instances.map((i) => i.instance.id);
    for (let at = 0; at < ids.length; at += 30) {
      const timers = await this.db
        .collection(COLLECTIONS.timers)
        .where('processInstanceId', 'in', ids.slice(at, at + 30))
        .where('status', '==', 'PENDING')
        .get();
      for (const doc of timers.docs) {
        const timer = doc.data() as { id: string; activityId: string; processInstanceId: string; executionId: string };
        const owner = instances.find((i) => i.instance.id === timer.processInstanceId);
        const token = owner?.tokens.find((t) => t.id === timer.executionId);
        // A PENDING timer whose token left without it should not exist (state.ts): noted, not offered as a move.
        if (
          owner === undefined ||
          token === undefined ||
          !owner.instance.activeExecutionIds.includes(token.id) ||
          token.timerIds?.includes(timer.id) !== true
        ) {
          this.stale.add(timer.activityId);
          continue;
        }
        found.push({
          key: `timer:${timer.activityId}`,
          order: orderOf(timer.processInstanceId),
          act: (now) => fireTimerRun(this.db, this.engine, timer.id, now),
        });
      }
    }
    return found.sort((a, b) => a.key.localeCompare(b.key) || a.order - b.order);
  }

  async waits(): Promise<WaitKey[]> {
    return (await this.waiting()).map((w) => w.key);
  }

  async act(wait: WaitKey, choice: Choice, scoped: boolean): Promise<void> {
    const target = (await this.waiting()).find((w) => w.key === wait);
    if (target === undefined) throw new Error(`nothing waits at ${wait}`);
    this.moves += 1;
    const now = new Date(START + this.moves * 2 * HOUR);
    await this.traced(() => target.act(now, choice, scoped));
  }

  visits(): Visit[] {
    return this.trace.visits();
  }

  notes(): readonly string[] {
    return [];
  }

  async end(): Promise<EndState> {
    const all = await this.instances();
    const live = all.filter((i) => i.instance.terminated === undefined);
    const incidents = live.flatMap((i) => i.instance.incidents.filter(isOpenIncident));
    const root = live.find((i) => i.instance.calledBy === undefined)?.instance;
    const waits = await this.waits();
    // Checked on our side alone: a completed instance has no called instance or item left running.
    const running = live.filter((i) => i.instance.calledBy !== undefined && i.instance.status === 'RUNNING');
    const inconsistent = [
      ...(root?.status === 'COMPLETED' && running.length > 0
        ? [`INCONSISTENT: the instance is COMPLETED while ${running.map((i) => i.instance.processKey).join(', ')} run`]
        : []),
      ...[...this.stale].map(staleTimer),
    ];
    return {
      status: incidents.length > 0 ? 'failed' : root?.status === 'COMPLETED' ? 'completed' : 'running',
      waits,
      failedAt: [...new Set(incidents.map((i) => i.activityId))].sort(),
      detail: [...incidents.map((i) => `${i.reason} at ${i.activityId}: ${i.message}`), ...inconsistent],
    };
  }
}
