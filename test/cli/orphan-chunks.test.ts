import { randomBytes, randomUUID } from 'node:crypto';
import { scanOrphanChunks } from '../../functions/src/cli/orphan-chunks-command';
import { INBOX } from '../../functions/src/inbox/document';
import { storeMessage, writeRawChunks } from '../../functions/src/inbox/store-message';
import { QUERIES } from '../../functions/src/queries';
import { parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { freshFirestores } from '../support/firestore';
import { TEST_REGISTRY } from '../support/inbox';
import { cliFor } from './run-cli';

/**
 * `inbox repair orphan-chunks`: `rawChunks` whose inbox document is gone (a
 * document deleted alone leaves its subcollection) are listed by inbox id
 * and deleted; chunks of a document that exists, chunks written within the
 * floor (a receipt writes its chunks before its document) and chunks outside
 * `inbox/` are left alone. One project on the emulator, the CLI in process.
 */
const { db, projectId } = freshFirestores().project('cli-orphan-chunks');
const cli = cliFor(projectId);
const DAY = 86_400_000;

/** An unreadable message of 300 KiB, stored as the receiver stores it: PARKED, its raw bytes in one chunk. */
async function storeChunked(): Promise<string> {
  const parsed = parsePushEnvelope({
    message: {
      data: randomBytes(300 * 1024).toString('base64'),
      attributes: { eventType: 'TaskCompleted' },
      messageId: randomUUID(),
    },
    subscription: 'projects/test/subscriptions/inbox-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, TEST_REGISTRY, { referenceBuckets: [] });
  const stored = await storeMessage(db, draft, {
    envelope: parsed.envelope,
    now: new Date(),
    shards: 16,
    offload: null,
  });
  expect((await db.collection(INBOX).doc(stored.id).get()).get('rawDataChunks')).toBe(1);
  return stored.id;
}
const chunksOf = async (id: string): Promise<number> =>
  (await QUERIES.rawChunksOf.build(db, id).count().get()).data().count;

test('lists and deletes the chunks of gone documents, past the floor only; the chunks of a document, young ones and others stay', async () => {
  // Its document deleted alone (by hand, or by the TTL): the chunk is left behind.
  const left = await storeChunked();
  await db.collection(INBOX).doc(left).delete();
  // A chunked document that exists: its chunk is its raw bytes.
  const kept = await storeChunked();
  // A receipt between its chunks and its document (retried through a Firestore outage): no document yet.
  const receiving = 'e'.repeat(40);
  await writeRawChunks(db, receiving, randomBytes(300 * 1024));
  // A rawChunks collection the inbox did not write.
  await db.collection('elsewhere').doc('x').collection('rawChunks').doc('0').set({ index: 0 });

  // Every chunk is minutes old: nothing is taken by default, nor with the least --older-than.
  const young = await cli('--json', 'repair', 'orphan-chunks');
  expect(young.err).toBe('');
  expect(young.code).toBe(0);
  expect(young.json()).toEqual({
    listed: 4,
    minAgeMs: 32 * DAY,
    young: 3,
    unrecognised: 1,
    orphans: [],
    dryRun: false,
  });
  expect((await cli('repair', 'orphan-chunks', '--older-than', '1h')).out).toContain('3 written within 1 h left alone');
  const refused = await cli('repair', 'orphan-chunks', '--older-than', '30m');
  expect(refused.code).toBe(2);
  expect(refused.err).toContain('--older-than: at least 1h (a receipt writes its chunks before its document');
  // A day on: a redelivery may still store the receiving message, so its chunks stay by default.
  expect((await scanOrphanChunks(db, new Date(Date.now() + DAY), true)).orphans).toEqual([]);

  // 33 days on, past any delivery: the dry run lists both gone documents and deletes nothing.
  const later = new Date(Date.now() + 33 * DAY);
  const dry = await scanOrphanChunks(db, later, true);
  expect(dry.orphans.map((o) => [o.inboxId, o.chunks, o.outcome]).sort()).toEqual(
    [
      [left, 1, null],
      [receiving, 1, null],
    ].sort(),
  );
  expect(await chunksOf(left)).toBe(1);
  expect(await chunksOf(receiving)).toBe(1);

  const real = await scanOrphanChunks(db, later, false);
  expect(real.orphans.map((o) => [o.inboxId, o.outcome]).sort()).toEqual(
    [
      [left, 'DELETED'],
      [receiving, 'DELETED'],
    ].sort(),
  );
  expect(await chunksOf(left)).toBe(0);
  expect(await chunksOf(receiving)).toBe(0);
  expect(await chunksOf(kept)).toBe(1);
  expect((await db.collection('elsewhere').doc('x').collection('rawChunks').doc('0').get()).exists).toBe(true);
  expect(await scanOrphanChunks(db, later, false)).toMatchObject({ listed: 2, orphans: [], unrecognised: 1 });
});
