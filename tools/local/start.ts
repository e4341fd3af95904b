/**
 * `npm start`: the local stack in one command (see stack.ts). Prints the
 * endpoints and the CLI commands to look inside, leaves its control URL in
 * .inbox-stack.json for `npm run demo`, and stops everything it started on
 * Ctrl-C (or SIGTERM), and nothing else.
 */
import { Command } from 'commander';
import { rmSync, writeFileSync } from 'node:fs';
import { serveControl, STACK_FILE } from './control';
import { numberIn } from './options';
import { startLocalStack } from './stack';
import { formatTable } from './table';
import { errorMessage } from '../../functions/src/core/errors';

/** `--peer key=value`, repeatable: the options of the app's simulated peers. */
function collectPeer(text: string, all: Record<string, string>): Record<string, string> {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`--peer takes key=value, not ${JSON.stringify(text)}`);
  return { ...all, [text.slice(0, eq)]: text.slice(eq + 1) };
}

async function main(): Promise<void> {
  const options = new Command('npm start')
    .description(
      'Run the whole inbox locally with one app (INBOX_APP): emulators, functions, its topics and subscriptions, scheduler and its simulated peers.',
    )
    .option('--project <id>', 'project id on the emulators', 'demo-inbox')
    .option('--peer <key=value>', "an option for the app's simulated peers (its local.ts), repeatable", collectPeer, {})
    .option(
      '--relay-every <ms>',
      'the simulated Cloud Scheduler calls relayInbox this often',
      numberIn(100, 3_600_000),
      2_000,
    )
    .option('--control-port <port>', 'port of the control API (0: any free one)', numberIn(0, 65_535), 0)
    .parse(process.argv)
    .opts<{ project: string; peer: Record<string, string>; relayEvery: number; controlPort: number }>();

  const stack = await startLocalStack({
    projectId: options.project,
    peers: options.peer,
    relayEveryMs: options.relayEvery,
    progress: (line) => console.error(`[stack] ${line}`),
  });
  const control = await serveControl(stack, options.controlPort);
  writeFileSync(STACK_FILE, `${JSON.stringify({ controlUrl: control.url, pid: process.pid }, null, 2)}\n`);
  const info = await stack.info();
  const peerLines = (stack.peers?.describe ?? []).map((l) => `${l}\n`).join('');
  const env = `export GOOGLE_CLOUD_PROJECT=${info.projectId} FIRESTORE_EMULATOR_HOST=${info.firestoreHost} PUBSUB_EMULATOR_HOST=${info.pubsubHost} STORAGE_EMULATOR_HOST=${info.storageUrl} METADATA_SERVER_DETECTION=none`;
  console.log(`\nThe inbox runs locally (project ${info.projectId}).\n`);
  console.log(
    formatTable(
      ['function', 'URL'],
      Object.entries(info.functions).map(([name, url]) => [name, url]),
    ),
  );
  console.log(
    `\nOperator console    ${info.consoleUrl}  (local: open on loopback, no sign-in; repairs are recorded as "local operator")`,
  );
  console.log(`
Firestore emulator  ${info.firestoreHost}        Pub/Sub emulator  ${info.pubsubHost}
Cloud Tasks (local) ${info.tasksHost}        function logs     ${info.logDir}
Cloud Storage (local) ${info.storageUrl}  buckets: ${info.buckets.payloads} (offloaded payloads), ${info.buckets.senders} (senders' objects, accepted as references)
App ${info.topology.app} (${info.app}):
${info.topology.inbound.map((t) => `  ${t.topic} (${t.messages.join(', ')}) → ${t.subscription} → receivePubSubPush`).join('\n')}
  dead letters: ${info.topology.deadLetter.topic} → ${info.topology.deadLetter.subscription} → receiveDeadLetter
  publishes to: ${info.topology.publishes.join(', ') || 'nothing'}
Control API: ${control.url} (GET /info, GET /status, POST /outage {"downMs":3000}, POST /receiver-line {"mode":"refuse"})
${peerLines}
Look inside (another terminal):
  ${env}
  npm run inbox -- stats
  npm run inbox -- list --status PARKED
  npm run inbox -- app

The app's demo against this stack, if it has one (demo/demo.ts):  npm run demo
Ctrl-C stops everything started here.
`);

  // `on`, not `once`: while our listener is there, the emulator harness leaves exiting to us (tools/emulators/cleanup.ts).
  let stopOn: (signal: NodeJS.Signals) => void = () => undefined;
  await new Promise<void>((resolve) => {
    stopOn = (signal) => {
      console.error(`\n[stack] ${signal}: stopping`);
      resolve();
    };
    process.on('SIGINT', stopOn);
    process.on('SIGTERM', stopOn);
  });
  try {
    rmSync(STACK_FILE, { force: true });
    await control.close();
    await stack.stop();
  } finally {
    process.off('SIGINT', stopOn);
    process.off('SIGTERM', stopOn);
  }
}

main().catch((err: unknown) => {
  console.error(errorMessage(err));
  rmSync(STACK_FILE, { force: true });
  process.exitCode = 1;
});
