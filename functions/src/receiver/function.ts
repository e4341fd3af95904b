import type { Request, Response } from '@google-cloud/functions-framework';
import type { PushTokenVerifier } from '../auth/push-token';
import { type Config, requirePushAuth } from '../config';
import { lazy, lazyAsync } from '../core/lazy';
import { createLogger } from '../log';
import type { Runtime } from '../runtime';
import { createPushHandler } from './receive-pubsub-push';
import { DEFAULT_REGISTRY } from './registry';

type HttpFunction = (req: Request, res: Response) => Promise<void>;

/** The push token check both push endpoints share; null while INBOX_PUSH_AUTH=disabled. */
function pushVerifier(config: Config): (() => Promise<PushTokenVerifier>) | null {
  const auth = requirePushAuth(config);
  if (auth === null) return null;
  // google-auth-library is loaded on the first request, not at start-up.
  return lazyAsync(async () => (await import('../auth/push-token')).googlePushTokenVerifier(auth.audience, auth.allowedEmails));
}

/** Builds `receivePubSubPush` from the parsed configuration; clients are created on first use. */
export function createReceivePubSubPush(config: Config, runtime: Runtime): HttpFunction {
  const relayUrl = config.relay.url;
  // The Cloud Tasks client is loaded on the first fast-path task, not at start-up.
  const queue = lazy(() => (require('../tasks/job-queue') as typeof import('../tasks/job-queue')).relayQueue(config, relayUrl ?? ''));
  return createPushHandler({
    db: runtime.db,
    registry: DEFAULT_REGISTRY,
    verifier: pushVerifier(config),
    log: createLogger(undefined, { function: 'receivePubSubPush' }),
    now: () => new Date(),
    maxBodyBytes: config.maxBodyBytes,
    writeTimeoutMs: config.writeTimeoutMs,
    shards: config.shards,
    fastPath: relayUrl === null ? null : (inboxId) => queue().enqueue(inboxId),
  });
}

/**
 * Builds `receiveDeadLetter`: same authentication as the receiver, but not
 * its size limit: it takes whatever Pub/Sub can deliver (the larger of the
 * receiver's limit and Pub/Sub's maximum), since what it refuses is lost.
 */
export function createReceiveDeadLetter(config: Config, runtime: Runtime): HttpFunction {
  const { createDeadLetterHandler, DEAD_LETTER_MAX_BODY_BYTES } = require('../deadletter/receive-dead-letter') as typeof import('../deadletter/receive-dead-letter');
  return createDeadLetterHandler({
    db: runtime.db,
    registry: DEFAULT_REGISTRY,
    verifier: pushVerifier(config),
    log: createLogger(undefined, { function: 'receiveDeadLetter' }),
    now: () => new Date(),
    maxBodyBytes: Math.max(config.maxBodyBytes, DEAD_LETTER_MAX_BODY_BYTES),
    writeTimeoutMs: config.writeTimeoutMs,
    shards: config.shards,
  });
}
