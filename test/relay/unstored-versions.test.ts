/**
 * The relay's log of process versions it met that were never stored
 * (issue 40): an instance started on a model whose version is not in
 * processVersions (an instance started before versions were kept) runs on
 * the deployed model, and the relay says so once per version, in one
 * WARNING line with the process key and version, whatever the number of
 * its instances and of relay calls.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { versionRef } from '../../functions/src/engine/store/versions';
import type { JobState } from '../../functions/src/engine/state';
import { createLogger } from '../../functions/src/log';
import { DEFAULT_NAME_ATTRIBUTE, type MessageType } from '../../functions/src/receiver/registry';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { freshFirestores } from '../support/firestore';
import { storePushed } from '../support/inbox';
import { NO_QUEUES } from '../support/queues';

const DIR = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const { db } = freshFirestores().project('relay-unstored');
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);
const DAY = 86_400_000;
const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: DAY,
  errorAfterAttempts: 3,
};

const ApprovedSchema = z.object({ caseId: z.string().min(1), approved: z.boolean() });
const Approved: MessageType<z.infer<typeof ApprovedSchema>> = {
  name: 'Approved',
  nameAttribute: DEFAULT_NAME_ATTRIBUTE,
  schema: ApprovedSchema,
  correlationKey: (p) => p.caseId,
  dedupKey: (p) => `Approved:${p.caseId}`,
};

const approve = (caseId: string): Promise<string> =>
  storePushed(db, { name: 'Approved', registry: [Approved], payload: { caseId, approved: true } });

/** An instance of `model` started and past its prepare job: it waits at waitApproval for Approved under its case id. */
async function waitingOn(engine: Engine, caseId: string): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'case-handling',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobCounted(db, engine, started.jobs[0] as JobState, {}, new Date());
  return started.instance.id;
}

test('instances of a version never stored run on the deployed model, and the relay logs that version once', async () => {
  const xml = await readFile(join(DIR, 'v1.bpmn'), 'utf8');
  const old: ProcessModel = await parseProcessModel(xml);
  // The deployed model draws the same process, edited since (another content hash): its wait is still there.
  const deployed = await parseProcessModel(xml.replace('Version 1 of a case', 'Version 1 of a case, edited'));
  expect(deployed.version).not.toBe(old.version);
  // Started by an engine that never stored its version (as before versions were kept).
  const before = new Engine([old], {}, STEPS);
  const ids = [await waitingOn(before, 'C-u1'), await waitingOn(before, 'C-u2')];
  expect((await versionRef(db, 'case-handling', old.version).get()).exists).toBe(false);

  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>));
  const relayEngine = new Engine([deployed], {}, STEPS);
  const deps: RelayDeps = {
    db,
    engine: relayEngine,
    policy,
    retentionMs: 7 * DAY,
    transactionTimeoutMs: 20_000,
    now: () => new Date(),
    random: () => 0.5,
  };
  const options = { budgetMs: 30_000, parallelism: 4, batchSize: 50, shards: 16 };
  await approve('C-u1');
  const first = await relayBatch(deps, NO_QUEUES, log, options);
  expect(first.correlated).toBe(1);
  await approve('C-u2');
  const second = await relayBatch(deps, NO_QUEUES, log, options);
  expect(second.correlated).toBe(1);

  // Both correlated (on the deployed model): each token moved on to pay.
  for (const id of ids) {
    const tokens = Object.values(
      ((await refs.instance(db, id).get()).get('tokens') ?? {}) as Record<string, { activityId: string }>,
    );
    expect(tokens.map((t) => t.activityId)).toContain('pay');
  }
  const unstored = lines.filter((l) => String(l.message).includes('was never stored'));
  expect(unstored).toEqual([
    expect.objectContaining({
      severity: 'WARNING',
      message: `instances of case-handling version ${old.version} run on the deployed model: that version was never stored; register its XML with \`inbox versions --register FILE\``,
      processKey: 'case-handling',
      processVersion: old.version,
    }),
  ]);
});
