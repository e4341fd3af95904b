import { createServer } from 'node:net';
import { INBOX } from '../../../functions/src/inbox/document';
import { freshFirestores } from '../../../test/support/firestore';
import { storePushed } from '../../../test/support/inbox';
import { registryOf } from '../../../functions/src/apps/load-app';
import chaosApp from '../chaos/app';
import { completionOf } from '../local/completions';
import { emptyTally, operate, type OperatorCli, type OperatorTally } from '../chaos/operator';
import { operatorCli } from '../chaos/stack-actions';

/**
 * The chaos run's operator while Firestore is away: the real CLI, aimed at a
 * port where nothing listens, answers exit 5 (unreachable). The operator has
 * done nothing then, so it waits and starts the repair over, as a person
 * would, until Firestore answers or its wait runs out.
 */
const { db, projectId } = freshFirestores().project('chaos-operator');

/** A loopback port nothing listens on (bound, then closed). */
async function deadHost(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `127.0.0.1:${address.port}`;
}

/** The CLI on the run's project: its first `away` calls go to the dead port, the rest to the emulator. */
function cliAwayFor(away: number, dead: string): { cli: OperatorCli; calls: () => number } {
  const real = operatorCli(projectId, process.env.FIRESTORE_EMULATOR_HOST ?? '');
  const down = operatorCli(projectId, dead);
  let calls = 0;
  return { cli: (argv) => (calls++ < away ? down(argv) : real(argv)), calls: () => calls };
}

async function parkedDocument(caseId: string): Promise<string> {
  // A message of the app the operator's CLI runs: a requeue checks the payload against that app's schema.
  const id = await storePushed(db, {
    name: 'WorkOrderCompleted',
    payload: completionOf(caseId),
    registry: registryOf(chaosApp),
  });
  const parked = await operatorCli(
    projectId,
    process.env.FIRESTORE_EMULATOR_HOST ?? '',
  )(['park', id, '--reason', 'held for the test']);
  expect(parked).toMatchObject({ code: 0 });
  return id;
}

const REQUEUE = { kind: 'requeue', atStep: 0, pick: 0, pauseMs: 0 } as const;

/** One requeue of a freshly parked document by the operator, the CLI away for its first `away` calls. */
async function requeueWhileAway(
  caseId: string,
  away: number,
  unreachableWaitMs: number,
): Promise<{ id: string; tally: OperatorTally; calls: number; lines: string[] }> {
  const id = await parkedDocument(caseId);
  const { cli, calls } = cliAwayFor(away, await deadHost());
  const tally = emptyTally();
  const lines: string[] = [];
  await operate({ db, cli, leaveAlone: new Set(), tally, progress: (l) => lines.push(l), unreachableWaitMs }, REQUEUE);
  return { id, tally, calls: calls(), lines };
}

test('a dry run that finds no Firestore is tried again until Firestore answers, then the repair is made once', async () => {
  const { id, tally, calls, lines } = await requeueWhileAway('op-away-twice', 2, 30_000);

  expect(tally).toEqual({ ...emptyTally(), requeued: 1 });
  // Two dry runs refused at the dead port, then the dry run and the confirmation against Firestore.
  expect(calls).toBe(4);
  expect(lines.filter((l) => l.includes('--dry-run failed (exit 5)'))).toHaveLength(2);
  expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('OPEN');
});

test('a Firestore that stays away past the wait is one failed repair, and nothing is changed', async () => {
  const { id, tally, calls, lines } = await requeueWhileAway('op-away-long', Number.MAX_SAFE_INTEGER, 1_500);

  expect(tally).toEqual({ ...emptyTally(), failed: 1 });
  expect(calls).toBeGreaterThanOrEqual(2);
  expect(lines.at(-1)).toBe('operator: requeue: Firestore did not answer for 1500 ms; given up');
  expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('PARKED');
});
