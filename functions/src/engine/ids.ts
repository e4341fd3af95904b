import { stableId } from '../core/hash';

/** Deterministic, hashed ids of process state (never sequential: Firestore hotspots on those). */

/** One instance per (process key, business key): a second start finds the first. */
export function instanceId(processKey: string, businessKey: string): string {
  return stableId('instance', processKey, businessKey);
}

/** The token a start creates; repairs create further tokens with their own seed. */
export function executionId(processInstanceId: string, seed: string): string {
  return stableId('execution', processInstanceId, seed);
}

/** A job per (token, node entry): a re-run of the same step finds the same job. */
export function jobId(executionIdValue: string, step: number): string {
  return stableId('job', executionIdValue, String(step));
}

/** The instance a call activity starts, per (caller's token, node entry): a re-run of the same step finds the same instance. */
export function calledInstanceId(callerInstanceId: string, executionIdValue: string, step: number): string {
  return stableId('called-instance', callerInstanceId, executionIdValue, String(step));
}

/** The items of a multi-instance activity per (token, node entry). */
export function itemBatchId(executionIdValue: string, step: number): string {
  return stableId('item-batch', executionIdValue, String(step));
}

/** The instance of item `index` of a batch. */
export function itemInstanceId(batch: string, index: number): string {
  return stableId('item-instance', batch, String(index));
}

/** A user task per (token, node entry): a re-run of the same step makes the same task. */
export function userTaskId(executionIdValue: string, step: number): string {
  return stableId('user-task', executionIdValue, String(step));
}

/**
 * A timer per (token, node entry, timer event, occurrence): the transaction
 * that sets it may run again and sets the same timer, and its Cloud Task is
 * named after it, so a second task for the same timer is refused.
 */
export function timerId(executionIdValue: string, step: number, activityId: string, occurrence: number): string {
  return stableId('timer', executionIdValue, String(step), activityId, String(occurrence));
}

/** The per-correlation-key document: waiting points (and later the inbox lane) of one key. */
export function correlationKeyDocId(correlationKey: string): string {
  return stableId('correlation-key', correlationKey);
}

/** The stored version of a process model: one document per (process key, version), whatever process or file holds it. */
export function processVersionId(processKey: string, version: string): string {
  return stableId('process-version', processKey, version);
}
