import type { Firestore } from '@google-cloud/firestore';
import { refs } from '../engine/store/collections';
import { offloadedObject } from './claim-check';

/**
 * What keeps an offloaded DONE document (and its object) past its
 * retention: the instance it went into. The instance does not hold the
 * payload, only its summary and the `gs://…#generation` reference under the
 * claim's variable, and a step of it reads the object by that reference,
 * also when an operator runs the step
 * again after an incident (`inbox repair move-token`). Deleting the object
 * while that can still happen turns a repairable incident into a lost
 * report. So the payload sweep and `inbox purge` keep such a document while
 * its instance exists and is not COMPLETED, or still has a PENDING job;
 * once it completes (or is deleted) they delete it as before.
 *
 * Only offloaded payloads are held: a document with an inline payload
 * handed all of it to the instance's variables, so nothing the instance
 * reads is lost with it (and the TTL policy, which can check nothing,
 * deletes those). A dismissed document went into no instance.
 */

/** The instance fields the hold reads (a field mask: tokens, jobs and variables stay on the server). */
const HOLD_FIELDS = ['status', 'jobsPendingSince'];

/** The instance an inbox document's payload went into, if it is one an instance reads by reference; null when nothing can hold it. */
export function holdingInstanceId(doc: Readonly<Record<string, unknown>>): string | null {
  if (doc.status !== 'DONE' || doc.correlatedVia === 'DISMISSED' || offloadedObject(doc.offloaded) === null)
    return null;
  return typeof doc.processInstanceId === 'string' && doc.processInstanceId !== '' ? doc.processInstanceId : null;
}

/**
 * Whether an instance (its stored fields; undefined: it does not exist)
 * may still read a payload it took by reference: its status when it does
 * (RUNNING, INCIDENT, or COMPLETED with a PENDING job), null when not.
 */
export function instanceHold(instance: Readonly<Record<string, unknown>> | undefined): string | null {
  if (instance === undefined) return null;
  const status = typeof instance.status === 'string' ? instance.status : 'UNKNOWN';
  const pendingJob = instance.jobsPendingSince !== undefined && instance.jobsPendingSince !== null;
  if (status !== 'COMPLETED') return status;
  return pendingJob ? 'COMPLETED with a PENDING job' : null;
}

/** What holds one document: the instance and why (its status). */
export interface InstanceHold {
  readonly processInstanceId: string;
  readonly instanceStatus: string;
}

/**
 * Reads the instances of `docs` that could hold them (one batched read,
 * two fields each) and returns, by inbox id, the documents they hold.
 * Documents nothing can hold are not read for and not in the map.
 */
export async function readInstanceHolds(
  db: Firestore,
  docs: ReadonlyArray<{ readonly id: string; readonly data: Readonly<Record<string, unknown>> }>,
): Promise<Map<string, InstanceHold>> {
  const holders = new Map<string, string>();
  for (const d of docs) {
    const instanceId = holdingInstanceId(d.data);
    if (instanceId !== null) holders.set(d.id, instanceId);
  }
  const ids = [...new Set(holders.values())];
  if (ids.length === 0) return new Map();
  const snaps = await db.getAll(...ids.map((id) => refs.instance(db, id)), { fieldMask: HOLD_FIELDS });
  const status = new Map(snaps.map((s) => [s.id, instanceHold(s.exists ? s.data() : undefined)]));
  const held = new Map<string, InstanceHold>();
  for (const [inboxId, processInstanceId] of holders) {
    const instanceStatus = status.get(processInstanceId) ?? null;
    if (instanceStatus !== null) held.set(inboxId, { processInstanceId, instanceStatus });
  }
  return held;
}
