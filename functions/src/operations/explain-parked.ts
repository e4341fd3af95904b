/**
 * `inbox explain` of a PARKED document, the pure part: why it was parked
 * (its reason, in the runbook's words) and what to do next. Pure.
 */
import { MAX_LIVE_TOKENS } from '../engine/state';
import type { ExplainFacts, Explanation, WaitingFact } from './explain-model';
import { CLI, when, whyNobodyWaits } from './explain-words';

/** Why a PARKED document is parked, and what repairs it. */
export function explainParked(f: ExplainFacts, now: Date): Pick<Explanation, 'summary' | 'because' | 'next'> {
  const { doc, id } = f;
  const at = doc.parkedAt === null ? '' : ` since ${when(doc.parkedAt, now)}`;
  const summary = `PARKED / ${String(doc.reason)}${at} (${String(doc.messageName ?? 'unknown message')}, key ${String(doc.correlationKey ?? 'none')})`;
  const requeue = `${CLI} requeue ${id}`;
  switch (doc.reason) {
    case 'INVALID_PAYLOAD':
      // Read when it arrived, parked again by a requeue: it no longer fits the app's schema as deployed now.
      if (doc.correlationKey !== null)
        return {
          summary,
          because: [
            `a requeue found its stored payload no longer fits the app's message schema as deployed now: ${String(doc.validationError ?? doc.lastError ?? 'no validation error stored')}`,
          ],
          next: [
            `have the sender publish it again in today's form (a new message gets its own document), or deploy an app whose schema accepts it and then ${requeue}`,
          ],
        };
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
    case 'TOKEN_LIMIT': {
      const instance =
        typeof doc.parkDetails?.processInstanceId === 'string' ? doc.parkDetails.processInstanceId : null;
      return {
        summary,
        because: [
          `a token of ${instance === null ? 'its instance' : `instance ${instance}`} waits for it, but taking it would have added a token to an instance that holds the most live tokens one instance may (${MAX_LIVE_TOKENS})`,
          'it was parked rather than correlated, so a flood of messages to one instance ends bounded; nothing of it was applied',
        ],
        next: [
          instance === null
            ? 'look at the instance its token belongs to'
            : `${CLI} instances ${instance} shows its tokens; end the ones that should not be there (${CLI} repair cancel-token)`,
          `once its tokens have ended: ${requeue}`,
          `if it is not to be processed: ${CLI} repair dismiss ${id} --note "…"`,
        ],
      };
    }
    case 'STEP_FAILED':
      return {
        summary,
        because: [
          `the engine could not apply it: ${String(doc.lastError ?? 'its step failed')}`,
          'this is no outage: the same step on the same state fails the same way, so after a few attempts it was parked rather than retried without end (a deploy of a model that changed under a waiting instance is the usual cause)',
        ],
        next: [
          'deploy a model the waiting instance can go on with (or repair the instance: move its token where the message is awaited)',
          `then ${requeue}`,
          `if it is not to be processed: ${CLI} repair dismiss ${id} --note "…"`,
        ],
      };
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
