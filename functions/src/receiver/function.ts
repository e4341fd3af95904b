import type { Request, Response } from '@google-cloud/functions-framework';
import type { Config } from '../config';
import type * as FirestoreModule from '../firestore';
import { lazy, lazyAsync } from '../core/lazy';
import { createLogger } from '../log';
import { createPushHandler } from './handler';
import { DEFAULT_REGISTRY } from './registry';

/** Builds `receivePubSubPush` from the parsed configuration; clients are created on first use. */
export function createReceivePubSubPush(config: Config): (req: Request, res: Response) => Promise<void> {
  const auth = config.pushAuth;
  const relayUrl = config.relay.url;
  // The Cloud Tasks client is loaded on the first fast-path task, not at start-up.
  const queue = lazy(() => (require('../tasks/job-queue') as typeof import('../tasks/job-queue')).relayQueue(config, relayUrl ?? ''));
  return createPushHandler({
    // require() on first use keeps the Firestore SDK out of the cold start.
    db: lazy(() => (require('../firestore') as typeof FirestoreModule).createFirestore(config.projectId)),
    registry: DEFAULT_REGISTRY,
    verifier:
      auth.mode === 'disabled'
        ? null
        : lazyAsync(async () => (await import('../auth/push-token')).googlePushTokenVerifier(auth.audience, auth.allowedEmails)),
    log: createLogger(undefined, { function: 'receivePubSubPush' }),
    now: () => new Date(),
    maxBodyBytes: config.maxBodyBytes,
    writeTimeoutMs: config.writeTimeoutMs,
    shards: config.shards,
    fastPath: relayUrl === null ? null : (inboxId) => queue().enqueue(inboxId),
  });
}
