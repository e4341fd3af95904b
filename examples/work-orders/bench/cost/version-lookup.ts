/**
 * What keeping versions costs a step, counted by the unit of work (the
 * reads of the step's own transaction): a correlation into an instance of
 * the deployed version, into one of an older version on a function that
 * has not read that version yet (cold: its processVersions document, once),
 * and into another of that version afterwards (warm). On
 * test/fixtures/bpmn-versions (v1, then v2 deployed), on a Firestore
 * emulator of its own. (A function's start also reads one processVersions
 * document per deployed model, in one batched get: registerVersions.)
 */
import { Firestore } from '@google-cloud/firestore';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseProcessModel } from '../../../../functions/src/bpmn/parse-model';
import { Engine } from '../../../../functions/src/engine/engine';
import { completeJobCounted } from '../../../../functions/src/engine/store/complete-job';
import { correlate } from '../../../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../../../functions/src/engine/store/unit-of-work';
import { registerVersions } from '../../../../functions/src/engine/store/versions';
import type { JobState } from '../../../../functions/src/engine/state';
import { startEmulators } from '../../../../tools/emulators/harness';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'bpmn-versions');
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);

export interface VersionLookup {
  /** Reads of the correlation's transaction into an instance of the deployed version. */
  readonly deployed: number;
  /** The same into an instance of an older version, the first on this function (its version read). */
  readonly cold: number;
  /** The same into a second instance of that version (the version kept in memory). */
  readonly warm: number;
}

export async function measureVersionLookup(): Promise<VersionLookup> {
  const emulators = await startEmulators({ pubsub: false });
  const host = emulators.firestore?.host;
  if (host === undefined) throw new Error('no Firestore emulator started');
  const db = new Firestore({ projectId: `cost-versions-${Date.now().toString(36)}`, host, ssl: false });
  try {
    const [x1, x2] = await Promise.all(['v1.bpmn', 'v2.bpmn'].map((f) => readFile(join(FIXTURES, f), 'utf8')));
    const [v1, v2] = await Promise.all([parseProcessModel(x1 as string), parseProcessModel(x2 as string)]);
    await registerVersions(db, [v1], async () => x1 as string, new Date());
    const e1 = new Engine([v1], {}, STEPS);
    // Instances waiting at v1's wait (prepare done), and one at v2's.
    const waiting = async (engine: Engine, caseId: string): Promise<void> => {
      const s = await startProcessInstance(db, engine, {
        processKey: 'case-handling',
        businessKey: caseId,
        variables: { caseId },
        now: new Date(),
      });
      await completeJobCounted(db, engine, s.jobs[0] as JobState, {}, new Date());
    };
    await waiting(e1, 'old-1');
    await waiting(e1, 'old-2');
    // The deploy of v2: a new function instance, which keeps its version at the start.
    await registerVersions(db, [v2], async () => x2 as string, new Date());
    const e2 = new Engine([v2], {}, STEPS);
    await waiting(e2, 'new-1');
    const approve = async (caseId: string): Promise<number> =>
      (
        await runUnitOfWork(db, (uow) =>
          correlate(uow, e2, { messageName: 'Approved', correlationKey: caseId, variables: {}, now: new Date() }),
        )
      ).stats.reads;
    return { deployed: await approve('new-1'), cold: await approve('old-1'), warm: await approve('old-2') };
  } finally {
    await db.terminate();
    await emulators.stop();
  }
}

export function versionLookupLine(v: VersionLookup): string {
  return `Version lookup (a correlation's transaction): into an instance of the deployed version ${v.deployed} reads; of an older version, the first on a function (cold) ${v.cold} (+${v.cold - v.deployed}), every later one (warm) ${v.warm} (+${v.warm - v.deployed}).`;
}
