/**
 * Live state of the case of test/fixtures/bpmn-versions for the impact of a
 * model change (`inbox model diff --live`, `inbox model impact`, the
 * deploy's check), made by the engine's own store on the emulator: v1
 * stored in processVersions, and instances of v1 at each kind of point (two
 * waiting at waitApproval with their reminder timers, one with its
 * `prepare` job pending, one in INCIDENT at prepare) plus one of v2 with its
 * `prepare` job pending. Also what each test of these fixtures drives them
 * with: the files loaded, and an instance started, approved and its jobs run
 * through the store.
 */
import type { Firestore } from '@google-cloud/firestore';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { correlate } from '../../functions/src/engine/store/correlate';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { JobState } from '../../functions/src/engine/state';

export const VERSIONS_DIR = join(__dirname, '..', 'fixtures', 'bpmn-versions');
export const V1_FILE = join(VERSIONS_DIR, 'v1.bpmn');
export const V2_FILE = join(VERSIONS_DIR, 'v2.bpmn');
/** An app whose model (v3) drops `prepare` and its handler. */
export const V3_APP = 'test/fixtures/apps/case-handling-v3';
/** The step handlers both versions run (async jobs). */
export const STEPS: ReadonlySet<string> = new Set(['prepare', 'nudge', 'audit', 'pay']);

export interface CaseVersions {
  readonly v1: ProcessModel;
  readonly v2: ProcessModel;
  /** The pending `prepare` jobs: of C-job (v1) and C-new (v2). */
  readonly preparing: readonly JobState[];
}

/** A version's model with the XML it was read from (what registerVersions stores). */
export interface LoadedVersion {
  readonly model: ProcessModel;
  readonly xml: string;
}

/** Reads and parses a .bpmn file (V1_FILE, V2_FILE). */
export async function loadVersion(file: string): Promise<LoadedVersion> {
  const xml = await readFile(file, 'utf8');
  return { model: await parseProcessModel(xml), xml };
}

/** Drives cases of the fixtures' process in `db` through the engine's store. */
export function caseDriver(db: Firestore) {
  return {
    /** Starts a case-handling instance for `caseId` (its business and correlation key). */
    start: (engine: Engine, caseId: string) =>
      startProcessInstance(db, engine, {
        processKey: 'case-handling',
        businessKey: caseId,
        variables: { caseId },
        now: new Date(),
      }),
    /** Correlates the Approved message to the case waiting for it. */
    approve: (engine: Engine, caseId: string, variables: Record<string, unknown> = {}) =>
      runUnitOfWork(db, (uow) =>
        correlate(uow, engine, { messageName: 'Approved', correlationKey: caseId, variables, now: new Date() }),
      ),
    /** Runs every job of an instance to the end with `engine`, in order, each COMPLETED; returns the activities run. */
    runJobs: async (engine: Engine, first: readonly JobState[]): Promise<string[]> => {
      const ran: string[] = [];
      for (const queue = [...first]; queue.length > 0;) {
        const job = queue.shift() as JobState;
        const done = await completeJobCounted(db, engine, job, {}, new Date());
        expect(done.result.status).toBe('COMPLETED');
        ran.push(job.activityId);
        queue.push(...done.result.jobs);
      }
      return ran;
    },
  };
}

/** Seeds `db` as the file's comment says; v2 is not stored (nothing of it was deployed there yet). */
export async function seedCaseVersions(db: Firestore): Promise<CaseVersions> {
  const v1 = await loadVersion(V1_FILE);
  const v2 = await loadVersion(V2_FILE);
  await registerVersions(db, [v1.model], async () => v1.xml, new Date());
  const e1 = new Engine([v1.model], {}, STEPS);
  const e2 = new Engine([v2.model], {}, STEPS);
  const { start } = caseDriver(db);
  for (const caseId of ['C-wait-1', 'C-wait-2']) {
    const started = await start(e1, caseId);
    for (const job of started.jobs) await completeJobCounted(db, e1, job, {}, new Date());
  }
  const pending = await start(e1, 'C-job');
  const failing = await start(e1, 'C-incident');
  for (const job of failing.jobs) await recordJobFailure(db, job, 'boom', 10, new Date(), { final: true });
  const fresh = await start(e2, 'C-new');
  return { v1: v1.model, v2: v2.model, preparing: [...pending.jobs, ...fresh.jobs] };
}

/** Runs the pending `prepare` jobs with v2 deployed (v1's instance reads its version from processVersions). */
export async function finishPreparing(db: Firestore, seeded: CaseVersions): Promise<void> {
  const engine = new Engine([seeded.v2], {}, STEPS);
  for (const job of seeded.preparing) await completeJobCounted(db, engine, job, {}, new Date());
}
