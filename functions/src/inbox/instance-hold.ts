import type { Firestore } from '@google-cloud/firestore';
import { MAX_CALL_DEPTH } from '../engine/state';
import { refs } from '../engine/store/collections';
import { offloadedObject } from './claim-check';

/**
 * What keeps an offloaded DONE document (and its object) past its
 * retention: the instance it went into, and the instances that called it.
 * The instance does not hold the payload, only its summary and the
 * `gs://…#generation` reference under the claim's variable, and a step of
 * it reads the object by that reference, also when an operator runs the
 * step again after an incident (`inbox repair move-token`). Deleting the
 * object while that can still happen turns a repairable incident into a
 * lost report. A called instance (call activity) hands all its variables,
 * the reference among them, to its caller when it ends, and an item of a
 * multi-instance activity its output: the child is COMPLETED then, but its
 * caller may read the object as well. So the payload sweep and `inbox
 * purge` follow `calledBy` upwards (the instance, its caller, the caller's
 * caller, at most MAX_CALL_DEPTH levels) and keep such a document while an
 * instance on the way exists and is not COMPLETED, or still has a PENDING
 * job; once all have completed (or the first is deleted, or one without a
 * caller completed) they delete it as before.
 *
 * Only offloaded payloads are held: a document with an inline payload
 * handed all of it to the instance's variables, so nothing the instance
 * reads is lost with it (and the TTL policy, which can check nothing,
 * deletes those). A dismissed document went into no instance.
 */

/** The instance fields the hold reads (a field mask: tokens, jobs and variables stay on the server). */
const HOLD_FIELDS = ['status', 'jobsPendingSince', 'calledBy.instanceId'];

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

/** The instance that started an instance (its stored fields): its caller's id, or null for a top-level one. */
export function callerOf(instance: Readonly<Record<string, unknown>> | undefined): string | null {
  const calledBy = instance?.calledBy as { readonly instanceId?: unknown } | null | undefined;
  const id = calledBy?.instanceId;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** What holds one document: the instance and why (its status). */
export interface InstanceHold {
  /** The instance that holds it: the one it went into, or a caller above it (the nearest that holds). */
  readonly processInstanceId: string;
  readonly instanceStatus: string;
}

/**
 * Reads the instances of `docs` that could hold them, and their callers
 * while those below have completed (one batched read per level, three
 * fields each; an instance is read once), and returns, by inbox id, the
 * documents they hold with the nearest instance that holds each. Documents
 * nothing can hold are not read for and not in the map. A chain of callers
 * longer than MAX_CALL_DEPTH, which the engine never makes, holds the
 * document: it is never deleted on a guess.
 */
export async function readInstanceHolds(
  db: Firestore,
  docs: ReadonlyArray<{ readonly id: string; readonly data: Readonly<Record<string, unknown>> }>,
): Promise<Map<string, InstanceHold>> {
  // By inbox id: the instance to look at next (the one it went into, then each caller up).
  let looking = new Map<string, string>();
  for (const d of docs) {
    const instanceId = holdingInstanceId(d.data);
    if (instanceId !== null) looking.set(d.id, instanceId);
  }
  const fields = new Map<string, Readonly<Record<string, unknown>> | undefined>();
  const held = new Map<string, InstanceHold>();
  // A child is at most MAX_CALL_DEPTH below its top-level instance: that many callers above the first.
  for (let level = 0; looking.size > 0 && level <= MAX_CALL_DEPTH; level++) {
    const unread = [...new Set(looking.values())].filter((id) => !fields.has(id));
    if (unread.length > 0) {
      const snaps = await db.getAll(...unread.map((id) => refs.instance(db, id)), { fieldMask: HOLD_FIELDS });
      for (const snap of snaps) fields.set(snap.id, snap.exists ? snap.data() : undefined);
    }
    const up = new Map<string, string>();
    for (const [inboxId, processInstanceId] of looking) {
      const instance = fields.get(processInstanceId);
      const instanceStatus = instanceHold(instance);
      if (instanceStatus !== null) held.set(inboxId, { processInstanceId, instanceStatus });
      else {
        const caller = callerOf(instance);
        if (caller !== null) up.set(inboxId, caller);
      }
    }
    looking = up;
  }
  for (const [inboxId, processInstanceId] of looking)
    held.set(inboxId, {
      processInstanceId,
      instanceStatus: `unknown: its callers go deeper than ${MAX_CALL_DEPTH} levels, which no call makes`,
    });
  return held;
}
