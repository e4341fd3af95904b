import type { Firestore } from '@google-cloud/firestore';
import request from 'supertest';
import { refs } from '../../functions/src/engine/store/collections';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import type { ProcessStack } from './process-stack';
import { waitFor } from './wait';

/**
 * The steps of an end-to-end test on a {@link ProcessStack}: a start over
 * startProcess's HTTP, a wait until a token waits for its message, and one
 * relay batch over the stack's engine and queues.
 */

const quiet = createLogger(() => undefined);

/** Starts a process through startProcess over HTTP (201 expected); its instance id. */
export async function startOverHttp(
  stack: ProcessStack,
  processKey: string,
  businessKey: string,
  variables: Record<string, unknown>,
): Promise<string> {
  const res = await request(stack.startServer).post('/').send({ processKey, businessKey, variables });
  if (res.status !== 201) throw new Error(`startProcess ${processKey} ${businessKey}: ${res.status} ${res.text}`);
  return (res.body as { processInstanceId: string }).processInstanceId;
}

/** Waits until exactly one token waits on the correlation key. */
export async function waitingOn(db: Firestore, correlationKey: string): Promise<void> {
  await waitFor(`a token waiting on ${correlationKey}`, async () =>
    (((await refs.correlationKey(db, correlationKey).get()).get('waiting') as unknown[] | undefined)?.length ?? 0) === 1
      ? true
      : undefined,
  );
}

/**
 * One relay batch on the stack, with a test's policy: retries after 1 to
 * 5 s, an error after 3 attempts, a day's buffer for early messages; claim
 * checks read through `payloadStore` when given.
 */
export function relayOnStack(
  db: Firestore,
  stack: ProcessStack,
  payloadStore?: () => PayloadStore,
): ReturnType<typeof relayBatch> {
  return relayBatch(
    {
      db,
      engine: stack.engine,
      policy: { backoffBaseMs: 1_000, backoffCapMs: 5_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
      retentionMs: 7 * 86_400_000,
      transactionTimeoutMs: 15_000,
      now: () => new Date(),
      random: () => 0.5,
      ...(payloadStore === undefined ? {} : { payloadStore }),
    },
    stack.queues,
    quiet,
    { budgetMs: 30_000, parallelism: 2, batchSize: 50, shards: 16 },
  );
}
