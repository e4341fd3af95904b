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

/**
 * The invoice of a work order. Hashed like every other id: a workOrderId is
 * the sender's text, and one with a slash, "." or "..", or a reserved
 * `__x__` name is no valid document id (`invoices/{workOrderId}` threw on
 * every attempt for "WO/7").
 */
export function invoiceDocId(workOrderId: string): string {
  return stableId('invoice', workOrderId);
}

/** The record of the escalation an escalation job makes: a re-run of the job finds it. */
export function escalationDocId(jobIdValue: string): string {
  return stableId('escalation', jobIdValue);
}

/**
 * Whether a text can be a Firestore document id as it is: non-empty, at most
 * 1,500 bytes, no slash, not "." or "..", not `__x__`. Only for reading what
 * was stored under a raw id before ids were hashed (the invoices written as
 * `invoices/{workOrderId}`).
 */
export function isDocumentId(text: string): boolean {
  return text.length > 0 && !text.includes('/') && text !== '.' && text !== '..' && !/^__.*__$/.test(text) && Buffer.byteLength(text, 'utf8') <= 1_500;
}
