import { randomBytes } from 'node:crypto';
import { status } from '@grpc/grpc-js';

/** An error answered to the gRPC caller with `code` (a `grpc.status` value). */
export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export const invalid = (message: string): RpcError => new RpcError(status.INVALID_ARGUMENT, message);
export const notFound = (what: string): RpcError =>
  new RpcError(status.NOT_FOUND, `Requested entity was not found: ${what}`);

// Character sets from the Task.name / Queue.name documentation in task.proto and queue.proto.
const PROJECT = '[A-Za-z0-9\\-:.]+';
const LOCATION = '[A-Za-z0-9\\-]+';
const QUEUE_ID = /^[A-Za-z0-9-]{1,100}$/;
const TASK_ID = /^[A-Za-z0-9_-]{1,500}$/;
const LOCATION_NAME = new RegExp(`^projects/${PROJECT}/locations/${LOCATION}$`);
const QUEUE_NAME = new RegExp(`^(projects/${PROJECT}/locations/${LOCATION})/queues/([^/]+)$`);
const TASK_NAME = /^(projects\/[^/]+\/locations\/[^/]+\/queues\/[^/]+)\/tasks\/([^/]*)$/;

/** Checks `projects/P/locations/L`. */
export function checkLocationName(name: string | undefined): string {
  if (name === undefined || !LOCATION_NAME.test(name)) {
    throw invalid(`Invalid location name "${name ?? ''}"; expected projects/PROJECT_ID/locations/LOCATION_ID`);
  }
  return name;
}

/** Checks `projects/P/locations/L/queues/Q` and returns its parts. */
export function parseQueueName(name: string | undefined): { location: string; queueId: string } {
  const m = name === undefined ? null : QUEUE_NAME.exec(name);
  const [, location, queueId] = m ?? [];
  if (location === undefined || queueId === undefined || !QUEUE_ID.test(queueId)) {
    throw invalid(
      `Invalid queue name "${name ?? ''}"; expected projects/PROJECT_ID/locations/LOCATION_ID/queues/QUEUE_ID ` +
        '(QUEUE_ID: letters, digits, hyphens; at most 100)',
    );
  }
  return { location, queueId };
}

/** Checks `projects/P/locations/L/queues/Q/tasks/T` and returns its parts. */
export function parseTaskName(name: string | undefined): { queue: string; taskId: string } {
  const m = name === undefined ? null : TASK_NAME.exec(name);
  const [, queue, taskId] = m ?? [];
  if (queue === undefined || taskId === undefined) {
    throw invalid(
      `Invalid task name "${name ?? ''}"; expected projects/PROJECT_ID/locations/LOCATION_ID/queues/QUEUE_ID/tasks/TASK_ID`,
    );
  }
  parseQueueName(queue);
  if (!TASK_ID.test(taskId)) {
    throw invalid(`Invalid task id "${taskId}": only letters, digits, hyphens and underscores, at most 500 characters`);
  }
  return { queue, taskId };
}

/** The last path segment of a resource name (what the X-CloudTasks-* headers carry). */
export function shortName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/**
 * A system-generated task id. Real ids are long decimal numbers (e.g.
 * "05885295116503454631"); mimicking that keeps code that logs or parses
 * them honest.
 */
export function generateTaskId(): string {
  return randomBytes(8).readBigUInt64BE().toString().padStart(20, '0');
}
