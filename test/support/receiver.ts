import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Server } from 'node:http';
import { createDeadLetterHandler, type DeadLetterDeps } from '../../functions/src/deadletter/receive-dead-letter';
import { createLogger } from '../../functions/src/log';
import { createPushHandler, type ReceiverDeps } from '../../functions/src/receiver/receive-pubsub-push';
import { DEFAULT_REGISTRY } from '../../functions/src/receiver/registry';

let registered = 0;

export interface TestReceiver {
  readonly server: Server;
  /** Every log line the receiver wrote, parsed. */
  readonly logs: Array<Record<string, unknown>>;
}

/** What both push endpoints need, with the test defaults: no push authentication, 14 MiB bodies, 5 s write deadline, logs into `logs`. */
function endpointDeps(db: Firestore, logs: Array<Record<string, unknown>>): DeadLetterDeps {
  return {
    db: () => db,
    registry: DEFAULT_REGISTRY,
    verifier: null,
    log: createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    now: () => new Date(),
    maxBodyBytes: 14 * 1024 * 1024,
    writeTimeoutMs: 5_000,
    shards: 16,
  };
}

/** Registers `handler` with the Functions Framework under a fresh name and serves it in process. */
function serve(prefix: string, handler: Parameters<typeof http>[1], logs: Array<Record<string, unknown>>): TestReceiver {
  const name = `${prefix}${++registered}`;
  http(name, handler);
  return { server: getTestServer(name), logs };
}

/**
 * The push handler registered with the Functions Framework under a fresh name
 * and served in process (getTestServer), with its logs captured.
 */
export function testReceiver(db: Firestore, overrides: Partial<ReceiverDeps> = {}): TestReceiver {
  const logs: Array<Record<string, unknown>> = [];
  return serve('receiverUnderTest', createPushHandler({ ...endpointDeps(db, logs), fastPath: null, ...overrides }), logs);
}

/** `receiveDeadLetter` registered and served in process like {@link testReceiver}, with the same defaults. */
export function testDeadLetterReceiver(db: Firestore, overrides: Partial<DeadLetterDeps> = {}): TestReceiver {
  const logs: Array<Record<string, unknown>> = [];
  return serve('deadLetterReceiverUnderTest', createDeadLetterHandler({ ...endpointDeps(db, logs), ...overrides }), logs);
}
