import { runUnitOfWork, type StatsTally } from '../../functions/src/engine/store/unit-of-work';
import { freshFirestores } from '../support/firestore';

/**
 * The unit of work's counters, which the relay's summary and the benchmarks
 * report as Firestore reads and writes: every attempt's reads (a contention
 * retry reads again, and is billed), the committed attempt's writes, and the
 * reads of a transaction that ends in an error.
 */

const db = freshFirestores()('unit-of-work');
beforeAll(async () => {
  await Promise.all(['a', 'b', 'c'].map((id) => db.collection('things').doc(id).set({ n: 1 })));
});

/** ABORTED: what Firestore answers on contention; the client runs the transaction again. */
const aborted = (): Error => Object.assign(new Error('injected contention'), { code: 10 });

test('a transaction retried after contention counts the reads of both attempts and the writes of the one that committed', async () => {
  const tally: StatsTally = { reads: 0, writes: 0 };
  let attempt = 0;
  const { result, stats } = await runUnitOfWork(
    db,
    async (uow) => {
      attempt += 1;
      await uow.get(db.collection('things').doc('a'));
      await uow.get(db.collection('things').doc('b'));
      uow.set(db.collection('things').doc('a'), { n: 2 });
      if (attempt === 1) throw aborted();
      await uow.get(db.collection('things').doc('c'));
      uow.set(db.collection('things').doc('c'), { n: 2 });
      return attempt;
    },
    { tally },
  );
  expect(result).toBe(2);
  expect(stats).toEqual({ reads: 2 + 3, writes: 2 });
  expect(tally).toEqual({ reads: 5, writes: 2 });
});

test('a transaction that fails for good still adds its reads to the tally, and no writes', async () => {
  const tally: StatsTally = { reads: 0, writes: 0 };
  await expect(
    runUnitOfWork(
      db,
      async (uow) => {
        await uow.get(db.collection('things').doc('a'));
        uow.set(db.collection('things').doc('a'), { n: 3 });
        throw new Error('a defect');
      },
      { tally },
    ),
  ).rejects.toThrow('a defect');
  expect(tally).toEqual({ reads: 1, writes: 0 });
  expect((await db.collection('things').doc('a').get()).get('n')).toBe(2);
});

test('a read gives the stored fields with Timestamps as Dates, nested ones too; a missing document is undefined', async () => {
  const at = new Date('2026-11-29T12:00:00.123Z');
  await db
    .collection('dated')
    .doc('d')
    .set({ receivedAt: at, lane: [{ receivedAt: at }], deadLetter: { at }, attempts: 2 });
  const { result } = await runUnitOfWork(db, async (uow) => ({
    found: await uow.get(db.collection('dated').doc('d')),
    missing: await uow.get(db.collection('dated').doc('none')),
  }));
  expect(result.found).toEqual({ receivedAt: at, lane: [{ receivedAt: at }], deadLetter: { at }, attempts: 2 });
  expect(result.found?.receivedAt).toBeInstanceOf(Date);
  expect(result.missing).toBeUndefined();
});
