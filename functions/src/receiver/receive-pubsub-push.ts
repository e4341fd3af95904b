import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { errorMessage, withDeadline } from '../core/errors';
import { storeMessage, type StoreOutcome } from '../inbox/store-message';
import type { Logger } from '../log';
import type { PushTokenVerifier } from '../auth/push-token';
import type { PushEnvelope } from '../inbox/draft';
import { type AcceptAnswer, createPushEndpoint } from './push-endpoint';
import { interpretMessage } from './interpret';
import type { MessageRegistry } from './registry';
import type { ClaimsConfig } from '../config';
import type { PayloadStore } from '../storage/payload-store';
import { currentTraceparent, fromAttributes, withSpan } from '../trace/trace';

/**
 * Everything the push receiver needs, passed in (tests build their own);
 * receivePubSubPushFunction builds it from the configuration.
 */
export interface ReceiverDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The message types it reads; a message of no known type is kept PARKED / INVALID_PAYLOAD, never refused. */
  readonly registry: MessageRegistry;
  /** As PushEndpointDeps.verifier (push-endpoint.ts): null when push authentication is disabled (local emulator). */
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  /** JSON lines on stdout for Cloud Logging, tagged with the function; the log-based metrics and alerts read their fields. */
  readonly log: Logger;
  /** The clock of receivedAt and nextAttemptAt; tests pass a fixed one. */
  readonly now: () => Date;
  /** As PushEndpointDeps.maxBodyBytes: base64 of INBOX_MAX_DATA_BYTES plus the envelope allowance. */
  readonly maxBodyBytes: number;
  /**
   * Deadline of the inbox write, ms (INBOX_WRITE_TIMEOUT_MS, default 8 s),
   * counted from the start of reading the message: the upload of an
   * offloaded payload and the document write are inside it. Past it the
   * answer is 503 and Pub/Sub redelivers; it stays below the subscription's
   * ack deadline (10 s at least), after which even a 2xx counts as a nack.
   */
  readonly writeTimeoutMs: number;
  /**
   * Shards of the relay's candidate index (INBOX_SHARDS, default 16): each
   * new document gets shardOf(id, shards). Must match the relay's; a
   * document stored under a larger count is moved into range by the relay.
   */
  readonly shards: number;
  /**
   * Fast path: asks for a relay of one new OPEN document within seconds (a
   * Cloud Task named after its id). null: the scheduled relay alone.
   * Its failure never changes the answer; the scheduled sweep is the net.
   */
  readonly fastPath: ((inboxId: string) => Promise<unknown>) | null;
  /**
   * Cloud Storage for claim checks, created on first use: only a payload
   * over `claims.offloadBytes` touches it, so a receiver that never
   * offloads never loads @google-cloud/storage (its cold start stays as
   * it was). runtime.payloadStore in production; locally the same client
   * reaches packages/storage-emulator through STORAGE_EMULATOR_HOST.
   * Its failures are answered 503 within `writeTimeoutMs`, which covers
   * the upload too.
   */
  readonly payloadStore: () => PayloadStore;
  /**
   * config.claims: `payloadBucket` (INBOX_PAYLOAD_BUCKET, default
   * `<project>-inbox-payloads`) receives payloads over `offloadBytes`
   * (INBOX_OFFLOAD_BYTES, default 512 KiB); a sender's reference must name
   * a bucket of `referenceBuckets` (INBOX_REFERENCE_BUCKETS, default none:
   * every reference is parked INVALID_PAYLOAD).
   */
  readonly claims: ClaimsConfig;
}

/** Longest wait for the fast-path task before the receiver answers anyway. */
export const FAST_PATH_TIMEOUT_MS = 2_000;

function ackFor(outcome: StoreOutcome): AcceptAnswer {
  switch (outcome.kind) {
    case 'STORED':
      return {
        kind: 'ok',
        body: { outcome: 'stored', id: outcome.id, status: outcome.doc.status, reason: outcome.doc.reason },
      };
    case 'DUPLICATE':
      return { kind: 'ok', body: { outcome: 'duplicate', id: outcome.id } };
    case 'COLLISION':
      // A redelivery of a known second payload changes nothing (it may have been admitted since: inbox repair admit-collision).
      if (outcome.duplicate) return { kind: 'ok', body: { outcome: 'duplicate', id: outcome.id } };
      return {
        kind: 'ok',
        body: {
          outcome: 'stored',
          id: outcome.id,
          status: 'PARKED',
          reason: 'KEY_COLLISION',
          collidesWith: outcome.firstId,
        },
      };
  }
}

function logOutcome(log: Logger, outcome: StoreOutcome, envelope: PushEnvelope): void {
  const fields = { inboxId: outcome.id, messageId: envelope.messageId, subscription: envelope.subscription };
  switch (outcome.kind) {
    case 'STORED':
      if (outcome.doc.status === 'PARKED') {
        log.warn('message parked on receipt', {
          ...fields,
          outcome: 'parked',
          reason: outcome.doc.reason,
          validationError: outcome.doc.validationError,
        });
      } else {
        log.info('message stored', {
          ...fields,
          outcome: 'stored',
          messageName: outcome.doc.messageName,
          correlationKey: outcome.doc.correlationKey,
        });
      }
      return;
    case 'DUPLICATE':
      // documentExists false: a replay of a message processed before its DONE document expired, known by its processed record.
      log.info('duplicate delivery, nothing changed', {
        ...fields,
        outcome: 'duplicate',
        documentExists: outcome.documentExists,
      });
      return;
    case 'COLLISION':
      // Logged as parked once: the "documents parked" metric counts these lines, and a redelivery parks nothing.
      if (outcome.duplicate)
        log.info('duplicate delivery, nothing changed', {
          ...fields,
          outcome: 'duplicate',
          collidesWith: outcome.firstId,
        });
      else
        log.warn('same dedup key, different payload: parked as KEY_COLLISION', {
          ...fields,
          outcome: 'parked',
          reason: 'KEY_COLLISION',
          collidesWith: outcome.firstId,
        });
      return;
  }
}

/**
 * `receivePubSubPush`. Before the 2xx stand only steps that cannot fail for a
 * business reason: authenticate, read the envelope, store under a
 * deterministic id. A technical failure is answered 5xx so Pub/Sub redelivers.
 */
export function createPushHandler(deps: ReceiverDeps): (req: Request, res: Response) => Promise<void> {
  // The receipt is a span of the publisher's trace (its context from the message attributes), or the root of a new one.
  return createPushEndpoint(deps, (envelope) =>
    withSpan('receipt', fromAttributes(envelope.attributes), async (span) => {
      const offload = {
        store: deps.payloadStore,
        bucket: deps.claims.payloadBucket,
        offloadBytes: deps.claims.offloadBytes,
        log: deps.log,
      };
      // The document keeps the receipt's context: a scheduled relay that finds it by its query continues this trace.
      const traceparent = currentTraceparent();
      // One deadline, started before the message is read: reading a 10 MiB payload takes a CPU second or more, and the
      // upload of an offloaded payload and the document come after it. Past it 503, never a late 2xx.
      const outcome = await withDeadline('inbox write', deps.writeTimeoutMs, () => {
        const draft = interpretMessage(envelope, deps.registry, deps.claims);
        return storeMessage(deps.db(), draft, { envelope, now: deps.now(), shards: deps.shards, offload, traceparent });
      });
      span.setAttributes({
        'inbox.id': outcome.id,
        'inbox.outcome': outcome.kind,
        'messaging.message.id': envelope.messageId,
      });
      logOutcome(deps.log, outcome, envelope);
      if (deps.fastPath !== null && outcome.kind === 'STORED' && outcome.doc.status === 'OPEN') {
        const fastPath = deps.fastPath;
        // Its own span: the task's traceparent header names it, so the relay call hangs under the hop that created it.
        await withSpan(
          'fast-path task',
          'active',
          () => withDeadline('fast-path task', FAST_PATH_TIMEOUT_MS, () => fastPath(outcome.id)),
          { 'inbox.id': outcome.id },
        ).catch((err: unknown) => {
          deps.log.warn('fast-path relay task not created; the scheduled relay will pick the message up', {
            inboxId: outcome.id,
            error: errorMessage(err),
          });
        });
      }
      return ackFor(outcome);
    }),
  );
}
