/**
 * Drives one chaos run: a local stack of its own (fresh emulators, four
 * relays, the chaos app and its two models), the plan's starts and
 * publishes with flow control, the races (each last tranche published
 * around its timer's due time), the faults and the operator's repairs at
 * their steps, the approver completing user tasks meanwhile (drive.ts),
 * then settling, the operator's one requeue of dead letters (settle.ts),
 * and the evaluation.
 */
import { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { startLocalStack } from '../../../tools/local/stack';
import { emptyApproverTally } from './approver';
import { drive } from './drive';
import { evaluateChaos } from './evaluate';
import { readChaosSnapshot } from './observe';
import { emptyTally } from './operator';
import { planChaos } from './plan';
import { RELAYS } from './plan-schedule';
import { chaosLine, chaosPassed } from './report';
import type { ChaosOptions, ChaosResult, RaceRun } from './run-types';
import { settleAndRepair } from './settle';
import { CHAOS_APP, CHAOS_BPMN_DIR, gateOf, operatorCli } from './stack-actions';
import { countVersions, storedVersions, versionsText } from './versions';

export type { ChaosOptions, ChaosResult } from './run-types';

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const plan = planChaos(options);
  const projectId = `chaos-${options.seed}-${Date.now().toString(36)}`;
  options.progress(
    `seed ${options.seed}: ${plan.orders.length} work orders, ${plan.messages.length} messages, ${plan.faults.length} faults; project ${projectId}`,
  );
  // The functions' line to Firestore, the outage gate: the operator's CLI goes through it too (gateOf).
  const gate = gateOf();
  const stack = await startLocalStack({
    projectId,
    relays: RELAYS,
    reuseEmulators: false,
    app: CHAOS_APP,
    env: { INBOX_BPMN_DIR: CHAOS_BPMN_DIR },
    progress: options.progress,
    firestoreLine: gate.line,
  });
  const info = await stack.info();
  // Straight to the emulator (not through the functions' gate): the run reads its results even while an outage is staged.
  const db = new Firestore({
    projectId,
    host: info.firestoreHost,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  });
  // Made after `db`, which keeps its line: the CLI's clients take the gate.
  const undoGate = gate.forNewClients();
  const pubsub = new PubSub({ projectId, apiEndpoint: info.pubsubHost });
  const tally = emptyTally();
  try {
    const cliHost = gate.host();
    const { poisonIds, faults, races, approver } = await drive(
      plan,
      stack,
      { db, projectId, cliHost },
      pubsub,
      options,
      tally,
    );
    let raced: readonly RaceRun[] = [];
    let approvals = emptyApproverTally();
    try {
      await settleAndRepair(db, operatorCli(projectId, cliHost), options, plan, { races, approver });
    } finally {
      raced = await races.finish();
      approvals = await approver.stop();
    }
    const snapshot = await readChaosSnapshot(db);
    const counts = evaluateChaos(plan, poisonIds, snapshot, approvals);
    const versions = countVersions(snapshot, await storedVersions(db));
    const seconds = Math.round((Date.now() - started) / 1000);
    return {
      line: `${chaosLine(options.seed, counts, seconds, tally)}; ${versionsText(versions)}`,
      ok: chaosPassed(counts) && versions.unstored === 0,
      versions,
      counts,
      faults,
      races: raced,
      operator: tally,
      approver: approvals,
      seconds,
    };
  } finally {
    undoGate();
    await pubsub.close();
    await db.terminate();
    await stack.stop();
  }
}
