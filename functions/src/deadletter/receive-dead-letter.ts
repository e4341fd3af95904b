import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { withDeadline } from '../core/errors';
import type { Logger } from '../log';
import type { OffloadSettings } from '../inbox/offload-payload';
import { interpretMessage } from '../receiver/interpret';
import { createPushEndpoint, type PushEndpointDeps } from '../receiver/push-endpoint';
import type { MessageRegistry } from '../receiver/registry';
import type { ClaimRules } from '../receiver/interpret';
import { storeDeadLetter } from './store-dead-letter';
import { unwrapDeadLetter } from './source';

/** Pub/Sub's largest message data: nothing larger can reach the dead-letter topic. */
const PUBSUB_MAX_DATA_BYTES = 10 * 1024 * 1024;
/** Room for the envelope around the base64 data (attributes, ids, JSON), as config.ts allows the receiver. */
const ENVELOPE_ALLOWANCE_BYTES = 512 * 1024;

/**
 * receiveDeadLetter's only size limit: the largest push body Pub/Sub can
 * send (base64 of 10 MiB of data plus the envelope), whatever
 * INBOX_MAX_DATA_BYTES says. It is the last stop, so a message the receiver
 * refused for its size (a lowered INBOX_MAX_DATA_BYTES) must be kept here,
 * not refused again and dropped after the retention; large raw data goes to
 * `rawChunks` as in the receiver. Equal to the receiver's limit at the
 * default INBOX_MAX_DATA_BYTES (test/deadletter/dead-letter-size.test.ts).
 */
export const DEAD_LETTER_MAX_BODY_BYTES = Math.ceil(PUBSUB_MAX_DATA_BYTES / 3) * 4 + ENVELOPE_ALLOWANCE_BYTES;

/**
 * What receiveDeadLetter needs: the push endpoint's checks (its
 * maxBodyBytes at least {@link DEAD_LETTER_MAX_BODY_BYTES}) and the inbox
 * write's settings, as the receiver has them (receiveDeadLetterFunction).
 */
export interface DeadLetterDeps extends PushEndpointDeps {
  /** The Firestore client, created on the first call. */
  readonly db: () => Firestore;
  /** The receiver's registry: the original message is read as the receiver would have read it. */
  readonly registry: MessageRegistry;
  /** JSON lines for Cloud Logging; every dead letter is an ERROR line, for the alert. */
  readonly log: Logger;
  /** The clock of parkedAt and of the recorded dead-letter event. */
  readonly now: () => Date;
  /** Deadline of the write, ms (INBOX_WRITE_TIMEOUT_MS); past it 503, and the subscription redelivers. */
  readonly writeTimeoutMs: number;
  /** INBOX_SHARDS, as for the receiver: a dead letter requeued to OPEN is found by the relay's per-shard query. */
  readonly shards: number;
  /** INBOX_REFERENCE_BUCKETS (config.claims), so a reference is judged as the receiver judged it; nothing is fetched here. */
  readonly claims: ClaimRules;
  /**
   * Where a valid payload over INBOX_OFFLOAD_BYTES goes, as at the receiver
   * (the payload bucket): a requeued dead letter then hands its process the
   * whole payload by reference. Absent or null (tools, tests): such a payload
   * is kept in `rawChunks` with its summary on the document.
   */
  readonly offload?: Omit<OffloadSettings, 'log'> | null;
}

/**
 * `receiveDeadLetter`: the push endpoint of the dead-letter topic's
 * subscription. Whatever Pub/Sub gave up on is kept in the inbox for good
 * (PARKED / DEAD_LETTERED, never expires), with an ERROR log for the alert.
 * Same authentication as the receiver; a technical failure answers 503 and
 * the dead-letter subscription retries (its retention is 31 days). Every
 * refusal is logged at ERROR: nothing comes after this endpoint, so what it
 * refuses is dropped when that retention ends.
 */
export function createDeadLetterHandler(deps: DeadLetterDeps): (req: Request, res: Response) => Promise<void> {
  return createPushEndpoint(
    deps,
    async (envelope) => {
      const { original, source } = unwrapDeadLetter(envelope);
      const draft = interpretMessage(original, deps.registry, deps.claims);
      const outcome = await withDeadline('dead-letter write', deps.writeTimeoutMs, () =>
        storeDeadLetter(
          deps.db(),
          draft,
          original,
          source,
          deps.now(),
          deps.shards,
          deps.offload === undefined || deps.offload === null
            ? null
            : { ...deps.offload, log: deps.log, timeoutMs: deps.writeTimeoutMs },
        ),
      );
      const fields = {
        inboxId: outcome.id,
        messageId: envelope.messageId,
        sourceSubscription: source.subscription,
        deliveryCount: source.deliveryCount,
        messageName: draft.messageName,
      };
      if (outcome.kind === 'PARKED')
        deps.log.error('message dead-lettered: kept as PARKED / DEAD_LETTERED', {
          ...fields,
          outcome: 'dead-lettered',
          reason: 'DEAD_LETTERED',
        });
      else
        deps.log.warn('dead-lettered message already in the inbox: event recorded, status unchanged', {
          ...fields,
          outcome: 'dead-letter-recorded',
          status: outcome.status,
        });
      return { kind: 'ok', body: { outcome: outcome.kind === 'PARKED' ? 'parked' : 'recorded', id: outcome.id } };
    },
    { severity: 'ERROR' },
  );
}
