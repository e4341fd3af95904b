/**
 * The pure engine core driven the way the store drives it, in memory: each
 * transition starts from the instance and every token as stored, and its
 * result is written back (tokens by id, jobs, user tasks, waiting points,
 * timers). What Firestore adds (transactions, the buffer, dispatch) is left
 * out; the store's own tests cover it on the emulator.
 */
import type { ProcessModel } from '../../functions/src/bpmn/model';
import type { SyncHandler } from '../../functions/src/engine/run';
import type {
  ExecutionState,
  InstanceState,
  JobState,
  TimerState,
  Transition,
  UserTaskState,
  WaitingPoint,
} from '../../functions/src/engine/state';
import { fireTimer } from '../../functions/src/engine/timer-transitions';
import {
  cancelToken,
  completeJob,
  completeUserTask,
  deliverMessage,
  jobThrewError,
  placeToken,
  startInstance,
} from '../../functions/src/engine/transitions';

export class CoreSim {
  instance: InstanceState | null = null;
  readonly tokens: Record<string, ExecutionState> = {};
  readonly jobs = new Map<string, JobState>();
  readonly userTasks = new Map<string, UserTaskState>();
  readonly timers = new Map<string, TimerState>();
  points: WaitingPoint[] = [];
  /** Every transition applied, in order. */
  readonly log: Transition[] = [];

  constructor(
    readonly model: ProcessModel,
    readonly sync: Readonly<Record<string, SyncHandler>> = {},
    public now = new Date('2026-12-01T09:00:00Z'),
  ) {}

  apply(t: Transition): Transition {
    this.log.push(t);
    this.instance = t.instance;
    for (const e of t.executions) this.tokens[e.id] = e;
    for (const j of t.jobs) this.jobs.set(j.id, j);
    for (const id of t.staleJobs) {
      const job = this.jobs.get(id);
      if (job?.status === 'PENDING') this.jobs.set(id, { ...job, status: 'DONE', lastError: 'stale' });
    }
    for (const u of t.userTasks) this.userTasks.set(u.id, u);
    for (const { id, reason } of t.closeUserTasks) {
      const task = this.userTasks.get(id);
      if (task?.status === 'OPEN') this.userTasks.set(id, { ...task, status: 'CANCELLED', cancelReason: reason });
    }
    for (const id of t.cancelTimers) this.timers.delete(id);
    for (const timer of t.timers) this.timers.set(timer.id, timer);
    this.points = this.points.filter(
      (p) => !t.unsubscribe.some((u) => u.executionId === p.executionId && u.messageName === p.messageName),
    );
    this.points.push(...t.subscribe);
    return t;
  }

  private state(executionId: string): {
    instance: InstanceState;
    execution: ExecutionState;
    tokens: Record<string, ExecutionState>;
  } {
    const execution = this.tokens[executionId];
    if (this.instance === null || execution === undefined) throw new Error(`no token ${executionId}`);
    return { instance: this.instance, execution, tokens: { ...this.tokens } };
  }

  start(variables: Readonly<Record<string, unknown>> = {}): Transition {
    return this.apply(
      startInstance(this.model, this.sync, {
        instanceId: 'i-1',
        executionId: 'e-1',
        businessKey: 'B-1',
        variables,
        now: this.now,
      }),
    );
  }

  /** Tokens not yet ended. */
  live(): ExecutionState[] {
    return (this.instance?.activeExecutionIds ?? []).map((id) => this.tokens[id] as ExecutionState);
  }

  /** PENDING jobs whose token waits for them. */
  pendingJobs(): JobState[] {
    return [...this.jobs.values()].filter((j) => j.status === 'PENDING' && this.tokens[j.executionId]?.jobId === j.id);
  }

  openTasks(): UserTaskState[] {
    return [...this.userTasks.values()].filter((u) => u.status === 'OPEN');
  }

  /** The job of the token at `activityId` is done (with `result`). */
  finishJob(activityId: string, result: Readonly<Record<string, unknown>> = {}): Transition {
    const job = this.pendingJobs().find((j) => j.activityId === activityId);
    if (job === undefined) throw new Error(`no pending job at ${activityId}`);
    const t = completeJob(this.model, this.sync, { ...this.state(job.executionId), job }, result, this.now);
    this.jobs.set(job.id, t.job);
    return this.apply(t);
  }

  /** The job of the token at `activityId` throws BPMN error `code` (its handler's BpmnError). */
  throwAt(activityId: string, code: string): Transition {
    const job = this.pendingJobs().find((j) => j.activityId === activityId);
    if (job === undefined) throw new Error(`no pending job at ${activityId}`);
    const t = jobThrewError(this.model, this.sync, { ...this.state(job.executionId), job }, code, code, this.now);
    this.jobs.set(job.id, t.job);
    return this.apply(t);
  }

  /** A person completes the open user task at `activityId`. */
  completeTask(activityId: string, variables: Readonly<Record<string, unknown>> = {}): Transition {
    const task = this.openTasks().find((u) => u.activityId === activityId);
    if (task === undefined) throw new Error(`no open user task at ${activityId}`);
    const t = completeUserTask(
      this.model,
      this.sync,
      { ...this.state(task.executionId), userTask: task },
      variables,
      { by: 'tester', requestId: `r-${task.id}` },
      this.now,
    );
    this.userTasks.set(task.id, t.userTask);
    return this.apply(t);
  }

  private delivered = 0;

  /** A message reaches the token waiting at `activityId` (with an inbox id of its own, as the relay gives it). */
  deliver(activityId: string, variables: Readonly<Record<string, unknown>> = {}): Transition {
    const point = this.points.find((p) => p.activityId === activityId);
    if (point === undefined) throw new Error(`nobody waits at ${activityId}`);
    this.delivered += 1;
    return this.apply(
      deliverMessage(
        this.model,
        this.sync,
        { ...this.state(point.executionId), point },
        variables,
        this.now,
        `inbox-${this.delivered}`,
      ),
    );
  }

  /** The timer of `activityId` fires. */
  fire(activityId: string): Transition {
    const timer = [...this.timers.values()].find((x) => x.activityId === activityId && x.status === 'PENDING');
    if (timer === undefined) throw new Error(`no pending timer of ${activityId}`);
    const t = fireTimer(this.model, this.sync, { ...this.state(timer.executionId), timer }, this.now);
    this.timers.set(timer.id, t.timer);
    return this.apply(t);
  }

  cancel(executionId: string): Transition {
    return this.apply(cancelToken(this.state(executionId), this.now, this.model, this.sync));
  }

  move(executionId: string, activityId: string): Transition {
    return this.apply(placeToken(this.model, this.sync, this.state(executionId), activityId, this.now));
  }

  /** A repair adds a new token at `activityId` (the store's move-token without a token id). */
  add(activityId: string, id = 'repair-1'): Transition {
    if (this.instance === null) throw new Error('not started');
    const token: ExecutionState = {
      id,
      processInstanceId: this.instance.id,
      activityId,
      status: 'ACTIVE',
      step: 0,
      jobId: null,
      waitingFor: null,
      createdAt: this.now,
      updatedAt: this.now,
    };
    return this.apply(
      placeToken(
        this.model,
        this.sync,
        { instance: this.instance, execution: token, tokens: { ...this.tokens } },
        activityId,
        this.now,
      ),
    );
  }

  /** The live token at `activityId` (exactly one). */
  tokenAt(activityId: string): ExecutionState {
    const found = this.live().filter((t) => t.activityId === activityId);
    if (found.length !== 1) throw new Error(`${found.length} tokens at ${activityId}`);
    return found[0] as ExecutionState;
  }
}
