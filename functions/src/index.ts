/**
 * Entry point: registers the project's functions with the Functions
 * Framework. `functions-framework --target=<name>` (and Cloud Functions)
 * serves one of them.
 *
 * Configuration is parsed here, once, so a bad variable stops the start-up
 * with a message that names it; so is the app (INBOX_APP), for the same reason. Only the function being served is built
 * (the Functions Framework's target: its --target flag or FUNCTION_TARGET,
 * which Cloud Functions sets), so its settings are checked and the others'
 * are not needed. Without a target (tests importing this module) all are.
 */
import { http } from '@google-cloud/functions-framework';
import { loadConfig } from './config';
import { outsideRequestDomain } from './http/outside-request-domain';
import { createRuntime } from './runtime';
import { tracedRequest } from './trace/http';
import { setupTracing } from './trace/setup';
import {
  fireTimerFunction,
  inboxConsoleFunction,
  type FunctionFactory,
  receiveDeadLetterFunction,
  receivePubSubPushFunction,
  relayInboxFunction,
  runJobFunction,
  startProcessFunction,
  sweepJobsFunction,
} from './wiring';

const config = loadConfig();
const runtime = createRuntime(config);
// The app first, as the configuration: a declaration defineApp refuses stops the start-up with one line
// naming the app's file, never a failure at the first message. (Its models were checked against it when
// `npm run build` bundled it; the engine reads them on first use.)
runtime.app();

const FUNCTIONS: Readonly<Record<string, FunctionFactory>> = {
  receivePubSubPush: receivePubSubPushFunction,
  receiveDeadLetter: receiveDeadLetterFunction,
  startProcess: startProcessFunction,
  runJob: runJobFunction,
  fireTimer: fireTimerFunction,
  sweepJobs: sweepJobsFunction,
  relayInbox: relayInboxFunction,
  inboxConsole: inboxConsoleFunction,
};

/** The target the Functions Framework will serve, read the way it reads it (flag first, then env). */
function servedTarget(argv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (const [i, arg] of argv.entries()) {
    if (arg.startsWith('--target=')) return arg.slice('--target='.length);
    if (arg === '--target') return argv[i + 1];
  }
  return env.FUNCTION_TARGET;
}

const target = servedTarget(process.argv, process.env);
// Before any function is built: the context manager must be in place for the first request's spans and log fields.
setupTracing(config.trace, config.projectId, target === undefined || target === '' ? 'functions' : target);

/** The push endpoints take their parent from the message attributes (receiver/), not from the push request's headers. */
const TRACED_BY_MESSAGE = new Set(['receivePubSubPush', 'receiveDeadLetter']);

for (const [name, factory] of Object.entries(FUNCTIONS)) {
  if (target !== undefined && target !== '' && target !== name) continue;
  const fn = factory(config, runtime);
  http(name, outsideRequestDomain(TRACED_BY_MESSAGE.has(name) ? fn : tracedRequest(name, fn)));
}
