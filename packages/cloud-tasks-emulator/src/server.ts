import * as grpc from '@grpc/grpc-js';
import { fromMs, queueConfigMsg } from './convert';
import type { Dispatcher } from './dispatcher';
import type { Faults } from './faults';
import {
  asMessage,
  type CreateQueueRequest,
  type CreateTaskRequest,
  type ListRequest,
  type NameRequest,
  type QueueMsg,
  type TaskNameRequest,
  type UpdateQueueRequest,
} from './messages';
import { RpcError } from './names';
import type { QueueRecord, Registry } from './queues';
import { taskMsg } from './tasks';

/**
 * The gRPC side: one handler per implemented CloudTasks method. Methods
 * without a handler here (the IAM ones) get grpc-js's default handler, which
 * answers UNIMPLEMENTED.
 */

function queueMsg(q: QueueRecord): QueueMsg {
  return {
    name: q.name,
    ...queueConfigMsg(q.config),
    state: q.state,
    purgeTime: q.purgeMs === undefined ? undefined : fromMs(q.purgeMs),
  };
}

/** What a handler needs from the emulator. */
export interface HandlerContext {
  readonly registry: Registry;
  readonly dispatcher: Dispatcher;
  readonly faults: Faults;
  readonly log: (line: string) => void;
}

type Impl = (request: unknown) => object;

/** Wraps a synchronous implementation: its RpcErrors become gRPC statuses, anything else INTERNAL. */
function unary(method: string, impl: Impl, log: (line: string) => void): grpc.handleUnaryCall<unknown, object> {
  return (call, callback) => {
    const target = describe(call.request);
    try {
      const response = impl(call.request);
      log(`rpc ${method} ${target} -> OK`);
      callback(null, response);
    } catch (err) {
      const code = err instanceof RpcError ? err.code : grpc.status.INTERNAL;
      const details = err instanceof Error ? err.message : String(err);
      log(`rpc ${method} ${target} -> ${grpc.status[code]}: ${details}`);
      callback({ code, details });
    }
  };
}

/** The resource a request is about, for the log. */
function describe(request: unknown): string {
  const r = asMessage<{ name?: string; parent?: string; queue?: { name?: string }; task?: { name?: string } }>(request);
  return r.task?.name || r.name || r.queue?.name || r.parent || '';
}

/** The service implementation for `server.addService`. */
export function cloudTasksHandlers(ctx: HandlerContext): grpc.UntypedServiceImplementation {
  const { registry, dispatcher, faults } = ctx;
  const impls: Record<string, Impl> = {
    ListQueues: (raw) => {
      const r = asMessage<ListRequest>(raw);
      const page = registry.listQueues(r.parent, r.filter, r.pageSize, r.pageToken);
      return { queues: page.items.map(queueMsg), nextPageToken: page.nextPageToken };
    },
    GetQueue: (raw) => queueMsg(registry.queue(asMessage<NameRequest>(raw).name)),
    CreateQueue: (raw) => {
      const r = asMessage<CreateQueueRequest>(raw);
      return queueMsg(registry.createQueue(r.parent, r.queue));
    },
    UpdateQueue: (raw) => {
      const r = asMessage<UpdateQueueRequest>(raw);
      return queueMsg(registry.updateQueue(r.queue, r.updateMask?.paths ?? []));
    },
    DeleteQueue: (raw) => {
      registry.deleteQueue(asMessage<NameRequest>(raw).name);
      return {};
    },
    PurgeQueue: (raw) => queueMsg(registry.purgeQueue(asMessage<NameRequest>(raw).name)),
    PauseQueue: (raw) => queueMsg(registry.setState(asMessage<NameRequest>(raw).name, 'PAUSED')),
    ResumeQueue: (raw) => queueMsg(registry.setState(asMessage<NameRequest>(raw).name, 'RUNNING')),
    ListTasks: (raw) => {
      const r = asMessage<ListRequest>(raw);
      const page = registry.listTasks(r.parent, r.pageSize, r.pageToken);
      return { tasks: page.items.map((t) => taskMsg(t, r.responseView)), nextPageToken: page.nextPageToken };
    },
    GetTask: (raw) => {
      const r = asMessage<TaskNameRequest>(raw);
      return taskMsg(registry.task(r.name), r.responseView);
    },
    CreateTask: (raw) => {
      // Injected failures come first: the call fails as a whole and creates nothing.
      const injected = faults.takeCreateTaskFailure();
      if (injected !== undefined)
        throw new RpcError(injected, `injected CreateTask failure (${grpc.status[injected]})`);
      const r = asMessage<CreateTaskRequest>(raw);
      return taskMsg(registry.createTask(r.parent, r.task), r.responseView);
    },
    DeleteTask: (raw) => {
      registry.deleteTask(asMessage<NameRequest>(raw).name);
      return {};
    },
    RunTask: (raw) => {
      const r = asMessage<TaskNameRequest>(raw);
      const t = registry.task(r.name);
      dispatcher.runNow(t);
      // "The dispatched task is returned ... after the task is dispatched but before the task is received by its target."
      return taskMsg(t, r.responseView);
    },
  };
  const service: grpc.UntypedServiceImplementation = {};
  for (const [method, impl] of Object.entries(impls)) service[method] = unary(method, impl, ctx.log);
  return service;
}
