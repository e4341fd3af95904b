import { retryDelayMs, shouldGiveUp } from './backoff';
import type { Faults } from './faults';
import { rpcStatus, sendHttp, type HttpOutcome, type OutgoingRequest } from './http';
import { shortName } from './names';
import type { TokenRequest } from './oidc';
import type { QueueRecord, Registry } from './queues';
import type { AttemptRecord, TaskRecord } from './tasks';

/** One finished dispatch attempt, as kept in the emulator's dispatch log. */
export interface DispatchRecord {
  /** Full task name. */
  readonly task: string;
  readonly queue: string;
  readonly url: string;
  /** 1-based attempt number of this task (X-CloudTasks-TaskRetryCount + 1). */
  readonly attempt: number;
  /** When the attempt was dispatched. */
  readonly time: Date;
  readonly durationMs: number;
  /** HTTP status, when the target answered. */
  readonly status?: number;
  /** Why there was no answer (connection error, deadline), otherwise absent. */
  readonly error?: string;
  /** The failure came from {@link Faults.failDispatches}; the target was not called. */
  readonly injected: boolean;
  /** What became of the task: done, scheduled again, deleted after its last attempt, or already gone. */
  readonly outcome: 'completed' | 'retrying' | 'gave-up' | 'discarded';
}

// setTimeout cannot wait longer than this; later tasks are re-checked when it fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Headers Cloud Tasks computes, reserves or replaces itself (compared lower-case). */
const RESERVED = /^(host|content-length|user-agent|x-google-.*|x-appengine-.*|x-cloudtasks-.*)$/;

/**
 * Sends due tasks to their targets and applies the queue's retry policy.
 *
 * One timer for the earliest scheduled task (unref'd: an idle emulator never
 * keeps the process alive); every state change triggers a "pump" that
 * dispatches what is due, up to each queue's maxConcurrentDispatches.
 */
export class Dispatcher {
  readonly log: DispatchRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pumpQueued = false;
  private stopped = false;
  private readonly inflight = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly registry: () => Registry,
    private readonly faults: Faults,
    private readonly logLine: (line: string) => void,
    /** Signs the OIDC token of a task that asks for one (see oidc.ts). */
    private readonly signToken: (request: TokenRequest) => string,
  ) {}

  /**
   * Asks for a pump soon. Deferred so that a CreateTask response still shows
   * the task as created (dispatchCount 0), never as already dispatched.
   */
  requestPump(): void {
    if (this.pumpQueued || this.stopped) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** RunTask: dispatch now, regardless of schedule, queue state and concurrency limit. */
  runNow(t: TaskRecord): void {
    const q = this.registry().queue(t.queue);
    t.scheduleMs = Date.now();
    this.dispatch(q, t);
  }

  /** Resolves once no task is in flight and no task waits in a running queue. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Cancels the timer and every in-flight request; resolves pending idle() calls. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const ac of this.inflight) ac.abort();
    this.inflight.clear();
    this.notifyIdle();
  }

  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    let next = Infinity;
    for (const q of this.registry().allQueues()) {
      if (q.state !== 'RUNNING') continue; // paused queues hold their tasks; resume pumps again
      const tasks = [...q.tasks.values()];
      let running = tasks.reduce((n, t) => n + t.inFlight, 0);
      const waiting = tasks.filter((t) => t.inFlight === 0).sort((a, b) => a.scheduleMs - b.scheduleMs);
      for (const t of waiting) {
        if (t.scheduleMs > now) {
          next = Math.min(next, t.scheduleMs);
          break;
        }
        // At the limit the rest waits for a completion, which pumps again.
        if (running >= q.config.rate.maxConcurrentDispatches) break;
        this.dispatch(q, t);
        running += 1;
      }
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    if (next !== Infinity) {
      this.timer = setTimeout(() => this.pump(), Math.min(MAX_TIMER_MS, Math.max(0, next - Date.now())));
      this.timer.unref();
    }
    if (this.isIdle()) this.notifyIdle();
  }

  private dispatch(q: QueueRecord, t: TaskRecord): void {
    const retryCount = t.dispatchCount;
    const attempt: AttemptRecord = { scheduleMs: t.scheduleMs, dispatchMs: Date.now() };
    t.dispatchCount += 1;
    t.inFlight += 1;
    t.firstAttempt ??= attempt;
    t.lastAttempt = attempt;
    const headers = dispatchHeaders(q, t, retryCount);
    // Cloud Tasks mints a fresh token for every attempt, for the task's account and audience.
    const { auth } = t.http;
    if (auth?.kind === 'oidc')
      headers['Authorization'] =
        `Bearer ${this.signToken({ serviceAccountEmail: auth.serviceAccountEmail, audience: auth.audience })}`;
    const request: OutgoingRequest = { url: t.http.url, method: t.http.method, headers, body: t.http.body };
    const fault = this.faults.takeDispatchFault({
      task: t.name,
      queue: q.name,
      url: t.http.url,
      attempt: t.dispatchCount,
    });
    const ac = new AbortController();
    this.inflight.add(ac);
    const sent: Promise<HttpOutcome> =
      fault === undefined
        ? sendHttp(request, t.deadlineMs, ac.signal)
        : Promise.resolve(
            fault === 'connection-refused'
              ? { error: 'connect ECONNREFUSED (injected)', kind: 'connection' }
              : { status: fault },
          );
    sent
      .then((outcome) => {
        this.inflight.delete(ac);
        this.settle(t, attempt, retryCount + 1, outcome, fault !== undefined);
      })
      // A bug here must show up in the log, not as an unhandled rejection in the host process.
      .catch((err: unknown) => this.logLine(`dispatch ${shortName(t.name)} failed internally: ${String(err)}`));
  }

  private settle(t: TaskRecord, attempt: AttemptRecord, number: number, outcome: HttpOutcome, injected: boolean): void {
    t.inFlight -= 1;
    if (this.stopped) return;
    const now = Date.now();
    attempt.status = rpcStatus(outcome);
    if ('status' in outcome) {
      attempt.responseMs = now;
      t.responseCount += 1;
      // X-CloudTasks-TaskExecutionCount "does not include failures due to 5XX error codes".
      if (outcome.status < 500) t.executionCount += 1;
      t.previousResponse = outcome.status;
    }
    const registry = this.registry();
    const ok = 'status' in outcome && outcome.status >= 200 && outcome.status < 300;
    let result: DispatchRecord['outcome'];
    if (!registry.isLive(t))
      result = 'discarded'; // deleted or purged meanwhile, or done through RunTask
    else if (ok) result = 'completed';
    else {
      const policy = registry.queue(t.queue).config.retry;
      const first = t.firstAttempt?.dispatchMs ?? attempt.dispatchMs;
      if (shouldGiveUp(policy, t.dispatchCount, first, now)) result = 'gave-up';
      else {
        result = 'retrying';
        // Every earlier attempt failed too (a success ends the task), so dispatchCount = failures so far.
        t.scheduleMs = now + retryDelayMs(policy, t.dispatchCount);
      }
    }
    if (result === 'completed' || result === 'gave-up') registry.finish(t);
    const entry: DispatchRecord = {
      task: t.name,
      queue: t.queue,
      url: t.http.url,
      attempt: number,
      time: new Date(attempt.dispatchMs),
      durationMs: now - attempt.dispatchMs,
      ...('status' in outcome ? { status: outcome.status } : { error: outcome.error }),
      injected,
      outcome: result,
    };
    this.log.push(entry);
    const what = entry.status !== undefined ? `HTTP ${entry.status}` : `error: ${entry.error ?? ''}`;
    this.logLine(
      `dispatch ${shortName(t.name)} #${number} ${t.http.method} ${t.http.url} -> ${what}${injected ? ' (injected)' : ''}; ${result}`,
    );
    this.pump();
  }

  private isIdle(): boolean {
    if (this.stopped) return true;
    for (const q of this.registry().allQueues()) {
      for (const t of q.tasks.values()) if (t.inFlight > 0 || q.state === 'RUNNING') return false;
    }
    return true;
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** The task's own headers minus the reserved ones, plus what Cloud Tasks adds to every attempt. */
function dispatchHeaders(q: QueueRecord, t: TaskRecord, retryCount: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(t.http.headers)) {
    const lower = name.toLowerCase();
    // A requested token replaces every Authorization header (an OAuth one the emulator cannot mint: then none is sent).
    if (RESERVED.test(lower) || (lower === 'authorization' && t.http.auth !== undefined)) continue;
    headers[name] = value;
  }
  headers['User-Agent'] = 'Google-Cloud-Tasks';
  headers['X-CloudTasks-QueueName'] = shortName(q.name);
  headers['X-CloudTasks-TaskName'] = shortName(t.name);
  headers['X-CloudTasks-TaskRetryCount'] = String(retryCount);
  headers['X-CloudTasks-TaskExecutionCount'] = String(t.executionCount);
  headers['X-CloudTasks-TaskETA'] = (t.scheduleMs / 1000).toFixed(6); // seconds since the epoch
  if (t.previousResponse !== undefined) headers['X-CloudTasks-TaskPreviousResponse'] = String(t.previousResponse);
  return headers;
}
