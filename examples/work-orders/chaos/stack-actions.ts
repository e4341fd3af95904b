/**
 * What the chaos run does to its stack besides publishing: the faults it
 * strikes, the starts it makes through startProcess, and the operator's CLI
 * in process on the run's project.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../functions/src/cli/main';
import type { LocalStack } from '../../../tools/local/stack';
import { APPROVALS, INSPECTION } from './app/inspection';
import type { OperatorCli } from './operator';
import { RACE } from './plan';
import type { PlannedInspection } from './plan-inspection';
import type { PlannedFault } from './plan-schedule';
import { sleep } from './run-types';

/**
 * The functions' line to Firestore: the outage gate, which a Firestore
 * restart closes (cutting the connections open) before it exports the data
 * it restarts with. The operator's CLI takes this line too: straight to the
 * emulator, a command could commit after the export and see its write undone
 * by the restart, which no real outage does to a committed write. `line` is
 * the stack's firestoreLine option; `host` the gate once the stack is up;
 * `forNewClients` points the Firestore clients this process makes from then
 * on at the gate (the client takes FIRESTORE_EMULATOR_HOST from process.env,
 * over any host it is given, when it is made; the CLI in process makes one
 * per command, whatever env it is passed) and returns the undo.
 */
export function gateOf(): {
  readonly line: (target: string, upstream: string) => Promise<string>;
  readonly host: () => string;
  readonly forNewClients: () => () => void;
} {
  let gate: string | null = null;
  const host = (): string => {
    if (gate === null) throw new Error('the stack served no relayInbox: no Firestore gate to give the CLI');
    return gate;
  };
  return {
    // relayInbox's upstream is the gate itself (the receiver's is a line of its own in front of it); each function keeps its line.
    line: async (target, upstream) => {
      if (target === 'relayInbox') gate = upstream;
      return upstream;
    },
    host,
    forNewClients: () => {
      const before = process.env.FIRESTORE_EMULATOR_HOST;
      process.env.FIRESTORE_EMULATOR_HOST = host();
      return () => {
        if (before === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
        else process.env.FIRESTORE_EMULATOR_HOST = before;
      };
    },
  };
}

/** The CLI in process on the run's project, with the chaos app and models deployed (what an operator's terminal runs), as `actor`; `firestoreHost`: the gate (gateOf). */
export function operatorCli(projectId: string, firestoreHost: string, actor = 'chaos operator'): OperatorCli {
  return async (argv) => {
    let out = '';
    let err = '';
    const env = {
      ...process.env,
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      INBOX_APP: CHAOS_APP,
      INBOX_BPMN_DIR: CHAOS_BPMN_DIR,
      INBOX_OPERATOR: actor,
    };
    const code = await runCli(
      [...argv],
      { out: (t) => (out += t), err: (t) => (err += t), confirm: async () => true },
      env,
    );
    return { code, out, err };
  };
}

/**
 * The app the run deploys (app/index.ts): the example's messages and steps
 * plus the inspection's, with the chaos models in bpmn/: the example's
 * process completed in four tranches with a racing deadline at the last
 * wait, and the one with a parallel fork and join, an error boundary loop, a
 * user task and a multi-instance user task with a completion condition.
 */
export const CHAOS_APP = 'examples/work-orders/chaos/app';
/** Its models (the app's `models` folder too; set as INBOX_BPMN_DIR so no setting of the caller's replaces them). */
export const CHAOS_BPMN_DIR = join(__dirname, 'bpmn');

/** What a work order starts with: the second model for an inspected order (its findings and approvers), else the first (its race deadline, if it races). */
export function orderStart(
  workOrderId: string,
  raceDeadline: string | null,
  inspection: PlannedInspection | undefined,
): { readonly processKey: string; readonly variables: Readonly<Record<string, unknown>> } {
  // providerScript "silent": the simulated provider leaves the completions to the chaos run. No raceDeadline: the model's 14 days.
  const variables = { workOrderId, providerScript: 'silent' };
  if (inspection !== undefined)
    return {
      processKey: INSPECTION.processKey,
      variables: {
        ...variables,
        [INSPECTION.findingsVariable]: inspection.findings,
        [APPROVALS.collectionVariable]: inspection.approvers.map((a) => a.name),
      },
    };
  return {
    processKey: 'work-order-execution',
    variables: { ...variables, ...(raceDeadline === null ? {} : { [RACE.variable]: raceDeadline }) },
  };
}

export async function strike(stack: LocalStack, fault: PlannedFault, downMs: number): Promise<string> {
  switch (fault.kind) {
    case 'relay-kill': {
      const { busy } = await stack.killRelay(fault.target);
      return busy ? 'killed mid-batch' : 'killed (no batch under way)';
    }
    case 'firestore-restart': {
      const report = await stack.firestoreOutage(downMs);
      return `${report.kind} in ${report.totalMs} ms`;
    }
    case 'dispatch-faults':
      // Task attempts answered 503 (Cloud Tasks retries them), and CreateTask calls that fail (jobs wait for sweepJobs).
      stack.failDispatches(40, 503);
      stack.failDispatches(10, 'connection-refused');
      stack.failNextCreateTask(10);
      return '50 dispatch attempts and 10 CreateTask calls failed';
    case 'deploy':
      await stack.redeploy({ INBOX_BPMN_DIR: await secondVersion() });
      return 'every function restarted on version 2 of both models';
  }
}

/**
 * Version 2 of the chaos models, as a team deploys an edited file: the same
 * drawing with a changed name and a note, so every instance started before
 * runs on version 1 (read from processVersions by the restarted functions)
 * and every one started after on version 2, and the evaluation's
 * expectations hold for both. Written to a folder of its own.
 */
export async function secondVersion(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chaos-v2-'));
  for (const file of (await readdir(CHAOS_BPMN_DIR)).filter((f) => f.endsWith('.bpmn'))) {
    const xml = await readFile(join(CHAOS_BPMN_DIR, file), 'utf8');
    const v2 = xml.replace(
      /(<bpmn:process id="[^"]+" name=")([^"]*)(" isExecutable="true">)/,
      '$1$2 (v2)$3\n    <bpmn:documentation>Version 2, deployed mid-run by the chaos run.</bpmn:documentation>',
    );
    if (v2 === xml) throw new Error(`${file}: no <bpmn:process id name isExecutable> to give a second version`);
    await writeFile(join(dir, file), v2);
  }
  return dir;
}

/** startProcess until it answers 2xx (idempotent per work order); 5xx and refused connections are retried. */
export async function startOrder(
  url: string,
  workOrderId: string,
  start: ReturnType<typeof orderStart>,
): Promise<void> {
  const body = JSON.stringify({ processKey: start.processKey, businessKey: workOrderId, variables: start.variables });
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      if (response.ok) return;
      if (response.status < 500)
        throw new Error(`startProcess ${workOrderId}: ${response.status} ${await response.text()}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('startProcess')) throw err;
    }
    if (attempt >= 240) throw new Error(`startProcess ${workOrderId}: no 2xx after ${attempt} attempts`);
    await sleep(250);
  }
}
