import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Server } from 'node:http';
import { createDeadLetterHandler, type DeadLetterDeps } from '../../functions/src/deadletter/receive-dead-letter';
import { createLogger } from '../../functions/src/log';
import { createPushHandler, type ReceiverDeps } from '../../functions/src/receiver/receive-pubsub-push';
import type { ClaimsConfig } from '../../functions/src/config';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { FIXTURE_REGISTRY } from './app';

/** The receiver's claim-check settings in tests: config.ts's defaults, a test bucket, no reference bucket allowed. */
export const TEST_CLAIMS: ClaimsConfig = {
  payloadBucket: 'test-inbox-payloads',
  offloadBytes: 512 * 1024,
  referenceBuckets: [],
};

/**
 * The payload store of a test that sends no payload over the threshold: any
 * use is a failure of that test (the receiver answers it 503), never a silent success.
 */
export function noPayloadStore(): PayloadStore {
  throw new Error('this test gave the receiver no payload store (pass payloadStore: a storage emulator store)');
}

let registered = 0;

export interface TestReceiver {
  readonly server: Server;
  /** Every log line the receiver wrote, parsed. */
  readonly logs: Array<Record<string, unknown>>;
}

/** What both push endpoints need, with the test defaults: the fixture app's message types, no push authentication, 14 MiB bodies, 5 s write deadline, TEST_CLAIMS, logs into `logs`. */
function endpointDeps(db: Firestore, logs: Array<Record<string, unknown>>): DeadLetterDeps {
  return {
    db: () => db,
    registry: FIXTURE_REGISTRY,
    verifier: null,
    log: createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    now: () => new Date(),
    maxBodyBytes: 14 * 1024 * 1024,
    writeTimeoutMs: 5_000,
    shards: 16,
    claims: TEST_CLAIMS,
  };
}

/** Registers `handler` with the Functions Framework under a fresh name and serves it in process. */
function serve(
  prefix: string,
  handler: Parameters<typeof http>[1],
  logs: Array<Record<string, unknown>>,
): TestReceiver {
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
  return serve(
    'receiverUnderTest',
    createPushHandler({
      ...endpointDeps(db, logs),
      fastPath: null,
      payloadStore: noPayloadStore,
      claims: TEST_CLAIMS,
      ...overrides,
    }),
    logs,
  );
}

/** `receiveDeadLetter` registered and served in process like {@link testReceiver}, with the same defaults. */
export function testDeadLetterReceiver(db: Firestore, overrides: Partial<DeadLetterDeps> = {}): TestReceiver {
  const logs: Array<Record<string, unknown>> = [];
  return serve(
    'deadLetterReceiverUnderTest',
    createDeadLetterHandler({ ...endpointDeps(db, logs), ...overrides }),
    logs,
  );
}
