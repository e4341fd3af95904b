import { Transaction } from '@google-cloud/firestore';
import request from 'supertest';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { roundsEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { TEST_REGISTRY } from '../support/inbox';
import { base64Json, completionEnvelope, envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { expireAsTtlWould } from '../support/ttl';
import { cliFor } from './run-cli';

/**
 * `inbox repair admit-collision ID`: the one command that repairs a
 * KEY_COLLISION. The scenario: a sender reports two tranches of one work
 * order without event ids, so both share the dedup identity and the second
 * is parked. The operator compares both payloads, admits the second, and it
 * is correlated as an event of its own, in the next round; neither payload
 * can ever be correlated twice.
 */
const DAY = 86_400_000;
const { db, projectId } = freshFirestores().project('cli-admit');
const cli = cliFor(projectId);
let engine: Engine;
let receiver: ReturnType<typeof testReceiver>;

beforeAll(async () => {
  engine = await roundsEngine();
  receiver = testReceiver(db, { registry: TEST_REGISTRY });
});

const doc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};
const push = async (body: Record<string, unknown>): Promise<Record<string, unknown>> =>
  (await request(receiver.server).post('/').send(body)).body as Record<string, unknown>;
const started = (key: string, round: number): Record<string, unknown> =>
  envelope({
    data: base64Json({ caseId: key, eventId: `s-${key}-${round}` }),
    attributes: { eventType: 'ExecutionStarted' },
  });
const relayDeps = (): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 1_000, backoffCapMs: 60_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 20_000,
  now: () => new Date(),
  random: () => 0.5,
});
const lane = async (key: string): Promise<string[]> =>
  ((await refs.correlationKey(db, key).get()).get('open') as Array<{ inboxId: string }> | undefined)?.map(
    (e) => e.inboxId,
  ) ?? [];

/** An instance of rounds.bpmn for `key` that has correlated round 1's "started" and `first`; the collision `second` parked. */
async function collided(key: string): Promise<{
  instanceId: string;
  firstId: string;
  collisionId: string;
  first: Record<string, unknown>;
  second: Record<string, unknown>;
}> {
  const instanceId = (
    await startProcessInstance(db, engine, {
      processKey: 'rounds',
      businessKey: key,
      variables: { caseId: key },
      now: new Date(),
    })
  ).instance.id;
  await relayOne(relayDeps(), String((await push(started(key, 1))).id));
  // Two tranches, no event ids: one dedup identity.
  const first = completionEnvelope({ caseId: key, completedItems: 100 });
  const second = completionEnvelope({ caseId: key, completedItems: 250 });
  const firstId = String((await push(first)).id);
  const parked = await push(second);
  expect(parked).toMatchObject({ status: 'PARKED', reason: 'KEY_COLLISION', collidesWith: firstId });
  await relayOne(relayDeps(), firstId);
  expect(await doc(firstId)).toMatchObject({ status: 'DONE' });
  return { instanceId, firstId, collisionId: String(parked.id), first, second };
}

describe('repair admit-collision', () => {
  test('requeue keeps refusing the collision and names the command that repairs it', async () => {
    const { collisionId } = await collided('C-adm-requeue');
    const r = await cli('requeue', collisionId);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`inbox repair admit-collision ${collisionId} --dry-run`);
  });

  test('--dry-run shows both payloads side by side and changes nothing', async () => {
    const { firstId, collisionId } = await collided('C-adm-dry');
    const before = await doc(collisionId);
    const table = await cli('repair', 'admit-collision', collisionId, '--dry-run');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/completedItems\s*│\s*100\s*│\s*250/);
    expect(table.out).toContain(`would admit ${collisionId}`);
    const json = await cli('--json', 'repair', 'admit-collision', collisionId, '--dry-run');
    expect(json.json()).toMatchObject({
      wouldAdmit: collisionId,
      first: { id: firstId, status: 'DONE', payload: { completedItems: 100 } },
      second: { id: collisionId, status: 'PARKED', payload: { completedItems: 250 } },
    });
    expect(await doc(collisionId)).toEqual(before);
  });

  test('admitted, the second payload is correlated as an event of its own, and neither payload can ever be correlated twice', async () => {
    const key = 'C-adm-real';
    const { instanceId, firstId, collisionId, first, second } = await collided(key);
    // Round 2 begins: the token waits for the next completion, which the parked tranche is.
    const started2 = String((await push(started(key, 2))).id);
    await relayOne(relayDeps(), started2);
    const r = await cli(
      'repair',
      'admit-collision',
      collisionId,
      '--note',
      'second tranche, confirmed by the provider',
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain(`admitted ${collisionId}`);
    expect(await doc(collisionId)).toMatchObject({
      status: 'OPEN',
      reason: null,
      collidesWith: null,
      admittedFrom: firstId,
      attempts: 0,
      repairs: [
        expect.objectContaining({
          kind: 'admit-collision',
          details: expect.objectContaining({
            note: 'second tranche, confirmed by the provider',
            collidesWith: firstId,
          }),
        }),
      ],
    });
    expect(await lane(key)).toEqual([collisionId]);

    await relayOne(relayDeps(), collisionId);
    expect(await doc(collisionId)).toMatchObject({ status: 'DONE', processInstanceId: instanceId });
    const instance = (await refs.instance(db, instanceId).get()).data() ?? {};
    expect(instance.variables).toMatchObject({ rounds: 2, completedItems: 250 });
    const correlated = instance.correlatedMessages as string[];
    expect([firstId, collisionId].map((id) => correlated.filter((c) => c === id).length)).toEqual([1, 1]);

    // A second run is a new request: refused, naming the first.
    const again = await cli('repair', 'admit-collision', collisionId);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`${collisionId} was admitted at`);

    // Redeliveries of either payload: duplicates of their own documents, now and after the DONE documents expired.
    expect(await push(second)).toEqual({ outcome: 'duplicate', id: collisionId });
    expect(await push(first)).toEqual({ outcome: 'duplicate', id: firstId });
    await expireAsTtlWould(db, new Date(Date.now() + 8 * DAY));
    expect(await push(second)).toEqual({ outcome: 'duplicate', id: collisionId });
    expect(await push(first)).toEqual({ outcome: 'duplicate', id: firstId });
    expect(
      (await db.collection(INBOX).where('correlationKey', '==', key).where('status', 'in', ['OPEN', 'PARKED']).get())
        .size,
    ).toBe(0);
  });

  test('a transaction re-run after a commit that landed but reported UNAVAILABLE reports success ("already applied"), and admits once', async () => {
    const { collisionId } = await collided('C-adm-retry');
    const proto = Transaction.prototype as unknown as { commit: (this: Transaction) => Promise<void> };
    const commit = proto.commit;
    let lose = 1;
    // The commit goes through; its answer is lost once, as after a connection drop: the SDK re-runs the callback.
    proto.commit = async function (this: Transaction): Promise<void> {
      await commit.call(this);
      if (lose > 0) {
        lose -= 1;
        throw Object.assign(new Error('injected: the commit landed, its answer was lost'), { code: 14 });
      }
    };
    let r;
    try {
      r = await cli('repair', 'admit-collision', collisionId);
    } finally {
      proto.commit = commit;
    }
    expect(lose).toBe(0);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    expect(r.out).toContain(`admitted ${collisionId} (already applied)`);
    expect((await doc(collisionId)).repairs).toHaveLength(1);
    expect(await lane('C-adm-retry')).toEqual([collisionId]);
  });

  test.each([
    ['an unknown id', () => Promise.resolve('f'.repeat(40)), 'no inbox document'],
    [
      'a document that is no collision',
      async () => String((await push(completionEnvelope({ caseId: 'C-adm-plain' }))).id),
      'is OPEN, not a KEY_COLLISION',
    ],
  ])('%s is refused with exit 1, also in a dry run', async (_what, idOf, message) => {
    const id = await idOf();
    for (const args of [
      ['repair', 'admit-collision', id],
      ['repair', 'admit-collision', id, '--dry-run'],
    ]) {
      const r = await cli(...args);
      expect(r.code).toBe(1);
      expect(r.err).toContain(message);
    }
  });
});
