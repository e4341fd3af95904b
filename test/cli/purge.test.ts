import { purgeDone } from '../../functions/src/cli/purge-command';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { relayOne } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { cliFor, fakeTerminal } from './run-cli';

/**
 * `inbox purge`: pages through DONE documents instead of loading them all,
 * shows its progress, and refuses a bound inside the retention (the DONE
 * document is the dedup record of a message Pub/Sub may still redeliver)
 * unless forced. One project on the emulator for the whole file.
 */
const { db, projectId } = freshFirestores().project('cli-purge');
const cli = cliFor(projectId);
let engine: Engine;
const DAY = 86_400_000;
const done: Record<'old' | 'young', string[]> = { old: [], young: [] };

/** A DONE document, correlated `daysAgo` days ago through the relay. */
async function doneDaysAgo(caseId: string, daysAgo: number): Promise<string> {
  const at = new Date(Date.now() - daysAgo * DAY);
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: at,
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, at);
  const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId), receivedAt: at });
  await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
      retentionMs: 7 * DAY,
      transactionTimeoutMs: 20_000,
      now: () => new Date(at.getTime() + 60_000),
      random: () => 0.5,
    },
    id,
  );
  expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
  return id;
}
const exists = async (id: string): Promise<boolean> => (await db.collection(INBOX).doc(id).get()).exists;

beforeAll(async () => {
  engine = await fixtureEngine();
  for (const i of [1, 2, 3]) done.old.push(await doneDaysAgo(`C-purge-old-${i}`, 10 + i));
  for (const i of [1, 2]) done.young.push(await doneDaysAgo(`C-purge-young-${i}`, i));
});

describe('inbox purge', () => {
  test.each([
    ['0s', '0s'],
    ['6d', '6d'],
    ['an ISO time tomorrow', new Date(Date.now() + DAY).toISOString()],
  ])(
    '--done-before %s (inside the 7 d retention) is refused without --force, also as a dry run; nothing is deleted',
    async (_name, bound) => {
      for (const args of [
        ['purge', '--done-before', bound, '--yes'],
        ['purge', '--done-before', bound, '--dry-run'],
      ]) {
        const r = await cli(...args);
        expect(r.code).toBe(2);
        expect(r.err).toContain('INBOX_DONE_RETENTION_DAYS');
        expect(r.err).toContain('--force');
      }
      for (const id of [...done.old, ...done.young]) expect(await exists(id)).toBe(true);
    },
  );

  test('pages through the DONE documents: never more than a page in hand, every one looked at once', async () => {
    const pages: number[] = [];
    const result = await purgeDone(db, new Date(Date.now() - 7 * DAY), {
      dryRun: true,
      pageSize: 2,
      onPage: (page) => void pages.push(page.length),
    });
    expect(result).toMatchObject({ scanned: 5, matched: 3, deleted: 0 });
    expect(pages).toEqual([2, 2, 1]);
  });

  test('a document that changed after its page was read is kept', async () => {
    const [changed] = done.old;
    const result = await purgeDone(db, new Date(Date.now() - 7 * DAY), {
      dryRun: false,
      pageSize: 10,
      onPage: async (page) => {
        if (page.some((s) => s.id === changed))
          await db
            .collection(INBOX)
            .doc(changed!)
            .update({ deadLetterEvents: [{ at: new Date() }] });
      },
    });
    expect(result).toMatchObject({ matched: 3, deleted: 2, changedSinceRead: 1 });
    expect(await exists(changed!)).toBe(true);
    expect(await exists(done.old[1]!)).toBe(false);
    for (const id of done.young) expect(await exists(id)).toBe(true);
  });

  test('with --force a young bound deletes, with a progress bar on a terminal', async () => {
    const terminal = fakeTerminal();
    const r = await cliFor(projectId, terminal.stream)('purge', '--done-before', '0s', '--force', '--yes');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('deleted 3 of 3 DONE documents');
    expect(terminal.drawn()).toContain('3/3');
    for (const id of [...done.old, ...done.young]) expect(await exists(id)).toBe(false);
  });
});
