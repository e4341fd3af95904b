/**
 * `inbox explain ID`, the pure part: from what was read about one inbox
 * document (explain-command.ts reads it), why it is where it is and what to
 * do next, in the runbook's words and with its commands (ids filled in).
 */

import { CLI, versionText, when, whyNobodyWaits } from './explain-words';
import { explainParked } from './explain-parked';
import type { ExplainedDoc, WaitingFact, ExplainFacts, Explanation } from './explain-model';

function explainOpen(
  f: ExplainFacts,
  now: Date,
): Pick<Explanation, 'summary' | 'because' | 'next' | 'parkedFromIfUnclaimed'> {
  const { doc } = f;
  const due = doc.nextAttemptAt === null || doc.nextAttemptAt.getTime() <= now.getTime();
  const attempt = due
    ? 'due now: the relay takes it at its next call (within a minute)'
    : `next attempt ${when(doc.nextAttemptAt, now)}`;
  const summary = `OPEN (${String(doc.messageName)}, key ${String(doc.correlationKey)}), ${doc.attempts} attempt(s) so far; ${attempt}`;
  const windowFrom = doc.requeuedAt ?? doc.receivedAt;
  const parkedFrom = windowFrom === null ? null : new Date(windowFrom.getTime() + f.bufferWindowMs);
  if (f.heldBehind !== null) {
    return {
      summary,
      because: [
        `held back behind the older OPEN document ${f.heldBehind.id} of the same key (per-key order: it goes first${f.heldBehind.nextAttemptAt === null ? '' : `, its next attempt ${when(f.heldBehind.nextAttemptAt, now)}`}); no attempt is counted meanwhile`,
      ],
      next: [`${CLI} explain ${f.heldBehind.id}`],
      parkedFromIfUnclaimed: parkedFrom,
    };
  }
  if (f.waiting.length === 1) {
    const w = f.waiting[0] as WaitingFact;
    return {
      summary,
      because: [
        `token ${w.executionId} of instance ${w.processInstanceId} waits for it at ${w.activityId}: the relay correlates it at its next attempt`,
      ],
      next: [],
      parkedFromIfUnclaimed: null,
    };
  }
  if (f.waiting.length > 1) {
    return {
      summary,
      because: [
        `${f.waiting.length} tokens wait for it (${f.waiting.map((w) => `${w.executionId} of ${w.processInstanceId}`).join(', ')}): its next attempt parks it AMBIGUOUS_CORRELATION`,
      ],
      next: [
        `cancel the wrong token: ${CLI} repair cancel-token --instance I --execution E (${CLI} incidents shows the DUPLICATE_WAITING_POINT incident)`,
      ],
      parkedFromIfUnclaimed: null,
    };
  }
  const technical =
    doc.lastError !== null && !doc.lastError.startsWith('no process instance waits')
      ? [`its last attempt failed: ${doc.lastError} (technical failures are retried, never parked)`]
      : [];
  const start = f.start ?? null;
  if (start !== null) {
    const existing = f.instances.find((i) => i.id === start.instanceId);
    const because =
      existing === undefined
        ? `no token waits for it, and ${String(doc.messageName)} starts process ${start.processKey} (message start event ${start.activityId}): its next attempt starts instance ${start.instanceId} with business key ${String(doc.correlationKey)}`
        : `no token waits for it, and process ${start.processKey}, which ${String(doc.messageName)} starts, has its instance for this key already (${existing.id}, ${existing.status}): its next attempt parks it ALREADY_STARTED`;
    return { summary, because: [...technical, because], next: [], parkedFromIfUnclaimed: null };
  }
  const nobody = whyNobodyWaits(f, now);
  const window =
    parkedFrom === null
      ? []
      : [
          `no waiting point for it yet; retried with backoff, parked NO_WAITING_INSTANCE from ${when(parkedFrom, now)} if still none (the buffer window counts from its ${doc.requeuedAt === null ? 'receipt' : 'requeue'})`,
        ];
  return {
    summary,
    because: [...technical, ...window, ...nobody.because],
    next: nobody.late
      ? [
          `a late or repeated message: nothing will take it; ${CLI} park ${f.id} --reason "…" keeps it as a record and stops the retries`,
        ]
      : nobody.repair,
    parkedFromIfUnclaimed: parkedFrom,
  };
}

/** When a DONE document goes, and what goes before it; what keeps it past that. */
function expiryOf(doc: ExplainedDoc, now: Date): string[] {
  const payloadExpiry = doc.payloadExpireAt ?? null;
  if (payloadExpiry === null)
    return doc.expireAt === null ? [] : [`the document is deleted (Firestore TTL) from ${when(doc.expireAt, now)}`];
  const chunks = doc.rawDataChunks ?? 0;
  const first =
    doc.offloadedUri === null || doc.offloadedUri === undefined
      ? `its raw bytes are in ${chunks} rawChunks document(s): the payload sweep deletes them with the document`
      : `its payload is offloaded (${doc.offloadedUri}): the payload sweep deletes the object, then the document`;
  const kept = doc.keptFor ?? null;
  const hold =
    kept === null
      ? []
      : [
          `not before instance ${kept.processInstanceId} has completed (now ${kept.instanceStatus}): the instance holds only the reference, and a step of it may still read the object (after an incident, a repair runs that step again); the payload sweep keeps both and looks again every hour`,
        ];
  return [`${first}, from ${when(payloadExpiry, now)}`, ...hold];
}

function explainDone(f: ExplainFacts, now: Date): Pick<Explanation, 'summary' | 'because' | 'next'> {
  const { doc } = f;
  const instance = f.instances.find((i) => i.id === doc.processInstanceId);
  const state = instance === undefined ? '' : ` (now ${instance.status})`;
  const at = doc.processedAt === null ? '' : ` at ${when(doc.processedAt, now)}`;
  const expiry = expiryOf(doc, now);
  const dismissed = doc.dismissed ?? null;
  if (doc.correlatedVia === 'DISMISSED' && dismissed !== null) {
    return {
      summary: `DONE: dismissed by ${dismissed.by}${at} (it was PARKED / ${String(dismissed.previousReason)})`,
      because: [
        `the operator's note: ${dismissed.note}`,
        ...(doc.processInstanceId === null ? [] : [`it concerned instance ${doc.processInstanceId}${state}`]),
        'its processed record keeps a redelivery a duplicate',
        ...expiry,
      ],
      next: [],
    };
  }
  if (doc.correlatedVia === 'START') {
    return {
      summary: `DONE: started instance ${String(doc.processInstanceId)}${state}${at}`,
      because: [
        'nobody waited for it and its name has a message start event: it started the instance in the same transaction',
        ...expiry,
      ],
      next: [],
    };
  }
  const via =
    doc.correlatedVia === 'BUFFER'
      ? 'from the buffer: the waiting point took it the moment its token got there (the message had come first)'
      : 'by the relay: a token was waiting when the relay looked';
  return {
    summary: `DONE: correlated into instance ${String(doc.processInstanceId)}${state}${at}`,
    because: [`correlated ${via}`, ...expiry],
    next: [],
  };
}

/** Why the document is where it is and what to do next. Pure. */
export function explain(f: ExplainFacts, now: Date): Explanation {
  const base = {
    id: f.id,
    status: f.doc.status,
    reason: f.doc.reason,
    heldBehind: f.heldBehind,
    waiting: f.waiting,
    instances: f.instances,
    versions: f.instances.flatMap((i) => versionText(i) ?? []),
  };
  if (f.doc.status === 'OPEN') return { ...base, ...explainOpen(f, now), nextAttemptAt: f.doc.nextAttemptAt };
  const none = { nextAttemptAt: null, parkedFromIfUnclaimed: null };
  if (f.doc.status === 'PARKED') return { ...base, ...explainParked(f, now), ...none };
  if (f.doc.status === 'DONE') return { ...base, ...explainDone(f, now), ...none };
  return { ...base, summary: `status ${f.doc.status}`, because: [], next: [`${CLI} show ${f.id}`], ...none };
}
