/**
 * `inbox explain ID`, the pure part: from what was read about one inbox
 * document (explain-command.ts reads it), why it is where it is and what to
 * do next, in the runbook's words and with its commands (ids filled in).
 */

import { tokenText, when } from './explain-words';
import type { ExplainedDoc, WaitingFact, ExplainFacts, Explanation } from './explain-model';

const CLI = 'npx inbox';

/** The instances' state for a key nobody waits under: why no token waits, and what would repair it. */
function whyNobodyWaits(f: ExplainFacts, now: Date): { because: string[]; repair: string[]; late: boolean } {
  const { messageName, correlationKey } = f.doc;
  if (f.instances.length === 0) {
    return {
      because: [
        `no process instance for key ${String(correlationKey)}: none waits for ${String(messageName)} with it and none has it as business key (the process was never started, or under another business key)`,
      ],
      repair: [
        `start the process for ${String(correlationKey)} (POST {processKey, businessKey, variables} to startProcess; the runbook's NO_WAITING_INSTANCE section)`,
      ],
      late: false,
    };
  }
  const because: string[] = [];
  const repair: string[] = [];
  let open = 0;
  for (const i of f.instances) {
    if (i.status === 'COMPLETED') {
      because.push(
        `instance ${i.id} (business key ${i.businessKey}) completed${i.completedAt === null ? '' : ` at ${when(i.completedAt, now)}`}: no token of it will wait again`,
      );
      continue;
    }
    open += 1;
    const incidents = i.openIncidents.length > 0 ? `, open incidents: ${i.openIncidents.join(', ')}` : '';
    const tokens = i.tokens.length === 0 ? 'no active token' : i.tokens.map((t) => tokenText(t)).join('; ');
    because.push(`instance ${i.id} (business key ${i.businessKey}) is ${i.status}${incidents}: ${tokens}`);
    if (i.status === 'INCIDENT' || i.tokens.some((t) => t.status === 'ACTIVE')) {
      repair.push(
        `repair instance ${i.id} first (${CLI} incidents; the runbook's process incidents / jobs failed sections), e.g. ${CLI} repair move-token --instance ${i.id} --activity WAIT_ACTIVITY`,
      );
    }
  }
  return { because, repair, late: open === 0 };
}

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

function explainParked(f: ExplainFacts, now: Date): Pick<Explanation, 'summary' | 'because' | 'next'> {
  const { doc, id } = f;
  const at = doc.parkedAt === null ? '' : ` since ${when(doc.parkedAt, now)}`;
  const summary = `PARKED / ${String(doc.reason)}${at} (${String(doc.messageName ?? 'unknown message')}, key ${String(doc.correlationKey ?? 'none')})`;
  const requeue = `${CLI} requeue ${id}`;
  switch (doc.reason) {
    case 'INVALID_PAYLOAD':
      return {
        summary,
        because: [
          `the message could not be read: ${String(doc.validationError ?? doc.lastError ?? 'no validation error stored')}`,
          'a requeue cannot help: the stored bytes stay unreadable',
        ],
        next: [
          `have the sender fix and republish it (a corrected message gets its own document); ${CLI} show ${id} has the raw bytes and attributes; the parked document stays as the record`,
        ],
      };
    case 'KEY_COLLISION':
      return {
        summary,
        because: [
          `a second, different payload under the dedup key of ${String(doc.collidesWith)}, which holds the first`,
        ],
        next: [
          `compare the two payloads: ${CLI} show ${id} and ${CLI} show ${String(doc.collidesWith)}`,
          `if the second must be processed as its own event: ${CLI} repair admit-collision ${id} --dry-run, then ${CLI} repair admit-collision ${id}`,
        ],
      };
    case 'AMBIGUOUS_CORRELATION': {
      const count = f.waiting.length;
      const because = [
        `${count > 1 ? `${count} tokens wait` : 'two or more tokens waited'} for ${String(doc.messageName)} with key ${String(doc.correlationKey)}: correlating to one would have been a guess`,
      ];
      if (count > 1) {
        return {
          summary,
          because: [
            ...because,
            ...f.waiting.map(
              (w) => `token ${w.executionId} of instance ${w.processInstanceId} waits at ${w.activityId}`,
            ),
          ],
          next: [
            `decide which token is wrong, then ${CLI} repair cancel-token --instance I --execution E`,
            `then ${requeue}`,
          ],
        };
      }
      return {
        summary,
        because: [
          ...because,
          count === 1
            ? `now exactly one token waits (${f.waiting[0]?.executionId ?? ''} of ${f.waiting[0]?.processInstanceId ?? ''})`
            : 'now no token waits for it',
        ],
        next: count === 1 ? [requeue] : whyNobodyWaits(f, now).repair.concat([`then ${requeue}`]),
      };
    }
    case 'DEAD_LETTERED': {
      const gaveUp = `Pub/Sub gave up delivering it to the receiver${doc.deliveryCount === null ? '' : ` after ${doc.deliveryCount} attempts`}${doc.sourceSubscription === null ? '' : ` (subscription ${doc.sourceSubscription})`}`;
      if (doc.collidesWith !== null)
        return {
          summary,
          because: [gaveUp, `it is a second payload under the dedup key of ${doc.collidesWith}`],
          next: [`${CLI} repair admit-collision ${id} --dry-run, then ${CLI} repair admit-collision ${id}`],
        };
      if (doc.correlationKey === null)
        return {
          summary,
          because: [gaveUp, 'and it is unreadable'],
          next: ['handle it as INVALID_PAYLOAD: have the sender fix and republish it'],
        };
      return {
        summary,
        because: [
          gaveUp,
          "every delivery was answered with something other than 2xx (the runbook's messages dead-lettered section says how to find why)",
        ],
        next: [
          "fix the cause first (the receiver's logs around the attempts)",
          requeue,
          `all of them: ${CLI} requeue --reason DEAD_LETTERED --since 1d --dry-run, then --yes`,
        ],
      };
    }
    case 'NO_WAITING_INSTANCE': {
      const waited = `no token waited for it within the buffer window (${Math.round(f.bufferWindowMs / 3_600_000)} h from its ${doc.requeuedAt === null ? 'receipt' : 'last requeue'})`;
      if (f.waiting.length === 1) {
        const w = f.waiting[0] as WaitingFact;
        return {
          summary,
          because: [
            waited,
            `now token ${w.executionId} of instance ${w.processInstanceId} waits for it at ${w.activityId}`,
          ],
          next: [requeue],
        };
      }
      if (f.waiting.length > 1)
        return {
          summary,
          because: [
            waited,
            `now ${f.waiting.length} tokens wait for it: a requeue would park it AMBIGUOUS_CORRELATION`,
          ],
          next: [
            `cancel the wrong token first: ${CLI} repair cancel-token --instance I --execution E`,
            `then ${requeue}`,
          ],
        };
      const nobody = whyNobodyWaits(f, now);
      if (nobody.late)
        return {
          summary,
          because: [waited, ...nobody.because],
          next: [
            'a late or repeated completion: decide with the business; usually it stays parked as the record of what arrived',
          ],
        };
      return {
        summary,
        because: [waited, ...nobody.because],
        next: [
          ...nobody.repair,
          `once ${CLI} instances ${String(doc.correlationKey)} shows a token waiting for it: ${requeue} (a requeue starts a new buffer window, so requeueing first works too)`,
        ],
      };
    }
    case 'ALREADY_STARTED': {
      const instanceId =
        typeof doc.parkDetails?.processInstanceId === 'string' ? doc.parkDetails.processInstanceId : 'I';
      const processKey = typeof doc.parkDetails?.processKey === 'string' ? doc.parkDetails.processKey : 'its process';
      const instance = f.instances.find((i) => i.id === instanceId);
      const state = instance === undefined ? '' : ` (now ${instance.status})`;
      return {
        summary,
        because: [
          `a start message (${String(doc.messageName)} starts ${processKey}), but the instance for key ${String(doc.correlationKey)} exists already: ${instanceId}${state}`,
          'one instance per business key: a second start is refused, and parked rather than dropped, because only the business can tell a repeated start from a key used twice',
        ],
        next: [
          `compare it with the instance: ${CLI} show ${id} and ${CLI} instances ${String(doc.correlationKey)}`,
          `a repeated start (the same business event sent again): ${CLI} repair dismiss ${id} --note "repeated start" (DONE, recorded; a redelivery stays a duplicate)`,
          'a key used for two different things: the sender must fix it; the parked document stays as the record',
        ],
      };
    }
    case 'START_REFUSED': {
      const problem =
        typeof doc.parkDetails?.problem === 'string'
          ? doc.parkDetails.problem
          : (doc.lastError ?? 'its variables failed the door checks');
      return {
        summary,
        because: [
          `the message would start a process, but ${problem}`,
          'no instance was started: it could not have run (the same checks refuse such a start through startProcess)',
        ],
        next: [
          `have the sender republish it with what the process needs, or fix the model and then ${requeue}`,
          `if it is not to be processed: ${CLI} repair dismiss ${id} --note "…"`,
        ],
      };
    }
    case 'REFERENCE_UNAVAILABLE': {
      const uri =
        typeof doc.parkDetails?.uri === 'string' ? doc.parkDetails.uri : (doc.referenceUri ?? 'its reference');
      const kind = doc.parkDetails?.unavailable;
      const live = typeof doc.parkDetails?.liveGeneration === 'string' ? doc.parkDetails.liveGeneration : null;
      const what =
        kind === 'CHANGED'
          ? `the object the message references, ${uri}, was replaced: its name holds generation ${live ?? '(another)'} now, and the inbox only reads the generation the message named`
          : kind === 'MISSING'
            ? `the object the message references, ${uri}, is missing: deleted (by hand, a lifecycle rule or the sender) before the relay got to it`
            : `the object the message references could not be read: ${String(doc.lastError ?? uri)}`;
      return {
        summary,
        because: [
          what,
          "the relay checks a sender's reference before correlating; no retry brings the content back, so it was parked, not retried",
        ],
        next: [
          'have the sender upload the data again and send a new message with the new reference (a new upload has a new generation; the parked document stays as the record)',
          `or restore that generation (from the bucket's soft delete or versioning) and then ${requeue}; ${CLI} show ${id} says FOUND, MISSING or CHANGED`,
          `if it is not to be processed: ${CLI} repair dismiss ${id} --note "…"`,
        ],
      };
    }
    case 'MANUAL':
      return {
        summary,
        because: [`parked by an operator: ${String(doc.lastError ?? 'no reason given')}`],
        next: [`if it should be processed after all: ${requeue}`],
      };
    case null: // no reason stored (a hand-written document): as an unknown reason
    default:
      return {
        summary,
        because: [`reason ${String(doc.reason)}: ${String(doc.lastError ?? '')}`],
        next: [`${CLI} show ${id}`],
      };
  }
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
  };
  if (f.doc.status === 'OPEN') return { ...base, ...explainOpen(f, now), nextAttemptAt: f.doc.nextAttemptAt };
  const none = { nextAttemptAt: null, parkedFromIfUnclaimed: null };
  if (f.doc.status === 'PARKED') return { ...base, ...explainParked(f, now), ...none };
  if (f.doc.status === 'DONE') return { ...base, ...explainDone(f, now), ...none };
  return { ...base, summary: `status ${f.doc.status}`, because: [], next: [`${CLI} show ${f.id}`], ...none };
}
