import { status } from '@grpc/grpc-js';
import { queueConfigFrom, updateQueueConfig, type QueueConfig } from './convert';
import type { QueueMsg, TaskMsg } from './messages';
import { RpcError, checkLocationName, generateTaskId, invalid, notFound, parseQueueName, parseTaskName } from './names';
import { newTaskRecord, type TaskRecord } from './tasks';

/** A queue and its live tasks. */
export interface QueueRecord {
  readonly name: string;
  config: QueueConfig;
  state: 'RUNNING' | 'PAUSED';
  purgeMs?: number;
  /** Live tasks by full name; completed, given-up and deleted ones are gone (see tombstones). */
  readonly tasks: Map<string, TaskRecord>;
}

/** One page of a List call. */
export interface Page<T> {
  readonly items: T[];
  readonly nextPageToken: string;
}

/**
 * The emulator's whole state: queues, tasks and the names of recently
 * finished tasks. Pure bookkeeping and validation; dispatching lives in
 * dispatcher.ts, which is told about every change through `onChange`.
 */
export class Registry {
  private readonly queues = new Map<string, QueueRecord>();
  /** Task name → time until which CreateTask with that name answers ALREADY_EXISTS. */
  private readonly tombstones = new Map<string, number>();

  constructor(
    private readonly tombstoneMs: number,
    private readonly onChange: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  allQueues(): IterableIterator<QueueRecord> {
    return this.queues.values();
  }

  queue(name: string | undefined): QueueRecord {
    parseQueueName(name);
    const q = name === undefined ? undefined : this.queues.get(name);
    if (q === undefined) throw notFound(`queue ${name ?? ''}`);
    return q;
  }

  createQueue(parent: string | undefined, msg: QueueMsg | undefined): QueueRecord {
    const location = checkLocationName(parent);
    if (msg === undefined) throw invalid('CreateQueueRequest.queue is required');
    const { location: queueLocation } = parseQueueName(msg.name);
    if (queueLocation !== location) throw invalid(`Queue name ${msg.name ?? ''} is not in ${location}`);
    const name = msg.name ?? '';
    // Unlike Cloud Tasks, a deleted queue's name is reusable at once (tests recreate queues).
    if (this.queues.has(name))
      throw new RpcError(status.ALREADY_EXISTS, `Requested entity already exists: queue ${name}`);
    const q: QueueRecord = { name, config: queueConfigFrom(msg), state: 'RUNNING', tasks: new Map() };
    this.queues.set(name, q);
    return q;
  }

  /** UpdateQueue; like the real method it creates the queue when it does not exist. */
  updateQueue(msg: QueueMsg | undefined, paths: readonly string[]): QueueRecord {
    if (msg === undefined) throw invalid('UpdateQueueRequest.queue is required');
    parseQueueName(msg.name);
    const name = msg.name ?? '';
    const existing = this.queues.get(name);
    if (existing === undefined) {
      const q: QueueRecord = {
        name,
        config: updateQueueConfig(queueConfigFrom({}), msg, paths),
        state: 'RUNNING',
        tasks: new Map(),
      };
      this.queues.set(name, q);
      return q;
    }
    existing.config = updateQueueConfig(existing.config, msg, paths);
    this.onChange(); // a new concurrency limit may free dispatch slots
    return existing;
  }

  listQueues(
    parent: string | undefined,
    filter: string | undefined,
    pageSize?: number,
    pageToken?: string,
  ): Page<QueueRecord> {
    const location = checkLocationName(parent);
    let state: string | undefined;
    if (filter !== undefined && filter !== '') {
      // The only filter Cloud Tasks documents for ListQueues: "state: PAUSED".
      const m = /^\s*state\s*[:=]\s*(RUNNING|PAUSED|DISABLED)\s*$/.exec(filter);
      if (m === null)
        throw invalid(`Unsupported filter "${filter}"; the emulator understands "state: RUNNING|PAUSED|DISABLED"`);
      state = m[1];
    }
    const all = [...this.queues.values()]
      .filter((q) => q.name.startsWith(`${location}/queues/`) && (state === undefined || q.state === state))
      .sort((a, b) => a.name.localeCompare(b.name));
    return paginate(all, pageSize, pageToken);
  }

  deleteQueue(name: string | undefined): void {
    const q = this.queue(name);
    this.queues.delete(q.name);
    for (const taskName of this.tombstones.keys()) {
      if (taskName.startsWith(`${q.name}/tasks/`)) this.tombstones.delete(taskName);
    }
    this.onChange();
  }

  purgeQueue(name: string | undefined): QueueRecord {
    const q = this.queue(name);
    for (const t of [...q.tasks.values()]) this.finish(t);
    q.purgeMs = this.now();
    this.onChange();
    return q;
  }

  setState(name: string | undefined, state: QueueRecord['state']): QueueRecord {
    const q = this.queue(name);
    q.state = state;
    this.onChange();
    return q;
  }

  createTask(parent: string | undefined, msg: TaskMsg | undefined): TaskRecord {
    const q = this.queue(parent);
    if (msg === undefined) throw invalid('CreateTaskRequest.task is required');
    let name: string;
    if (msg.name !== undefined && msg.name !== '') {
      const { queue } = parseTaskName(msg.name);
      if (queue !== q.name) throw invalid(`Task name ${msg.name} does not belong to queue ${q.name}`);
      name = msg.name;
      if (q.tasks.has(name)) throw new RpcError(status.ALREADY_EXISTS, `Requested entity already exists: task ${name}`);
      const until = this.tombstones.get(name);
      if (until !== undefined && until > this.now()) {
        throw new RpcError(
          status.ALREADY_EXISTS,
          'The task cannot be created because a task with this name existed too recently.',
        );
      }
      this.tombstones.delete(name);
    } else {
      do name = `${q.name}/tasks/${generateTaskId()}`;
      while (q.tasks.has(name));
    }
    const t = newTaskRecord(name, q.name, msg, this.now());
    q.tasks.set(name, t);
    this.onChange();
    return t;
  }

  task(name: string | undefined): TaskRecord {
    const { queue } = parseTaskName(name);
    const t = name === undefined ? undefined : this.queue(queue).tasks.get(name);
    if (t === undefined) throw notFound(`task ${name ?? ''}`);
    return t;
  }

  listTasks(parent: string | undefined, pageSize?: number, pageToken?: string): Page<TaskRecord> {
    const q = this.queue(parent);
    const all = [...q.tasks.values()].sort((a, b) => a.scheduleMs - b.scheduleMs || a.name.localeCompare(b.name));
    return paginate(all, pageSize, pageToken);
  }

  deleteTask(name: string | undefined): void {
    this.finish(this.task(name));
    this.onChange();
  }

  /** Whether `t` is still live (not completed, given up, deleted or purged). */
  isLive(t: TaskRecord): boolean {
    return this.queues.get(t.queue)?.tasks.get(t.name) === t;
  }

  /** Removes a task for good (success, retries exhausted, delete, purge) and keeps its name reserved. */
  finish(t: TaskRecord): void {
    const q = this.queues.get(t.queue);
    if (q?.tasks.get(t.name) !== t) return;
    q.tasks.delete(t.name);
    this.tombstones.set(t.name, this.now() + this.tombstoneMs);
    this.pruneTombstones();
  }

  private pruneTombstones(): void {
    // Insertion order is expiry order (one retention for all, a re-created
    // name loses its old entry first), so stop at the first live tombstone.
    const now = this.now();
    for (const [name, until] of this.tombstones) {
      if (until > now) break;
      this.tombstones.delete(name);
    }
  }
}

const MAX_PAGE = 1000;

function paginate<T>(all: readonly T[], pageSize = 0, pageToken = ''): Page<T> {
  if (pageSize < 0) throw invalid('pageSize must not be negative');
  const size = pageSize === 0 ? MAX_PAGE : Math.min(pageSize, MAX_PAGE);
  const offset = pageToken === '' ? 0 : Number(pageToken);
  if (!Number.isInteger(offset) || offset < 0) throw invalid(`Invalid page token "${pageToken}"`);
  const end = offset + size;
  return { items: all.slice(offset, end), nextPageToken: end < all.length ? String(end) : '' };
}
