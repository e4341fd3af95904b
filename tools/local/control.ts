/**
 * The local stack's control surface: what `npm run demo` (and a curious
 * user) can ask a running `npm start`. In process it is the stack itself;
 * across processes a small JSON API on a loopback port serves the same calls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppTopology } from '../../functions/src/apps/topology';
import type { ScheduleStats } from './scheduler';
import { REPO_ROOT } from './serve-function';
import { errorMessage } from '../../functions/src/core/errors';

export type FunctionTarget =
  'receivePubSubPush' | 'receiveDeadLetter' | 'startProcess' | 'runJob' | 'fireTimer' | 'sweepJobs' | 'relayInbox';

export interface StackInfo {
  readonly projectId: string;
  /** The Firestore emulator itself (not the stack's gate in front of it). */
  readonly firestoreHost: string;
  readonly pubsubHost: string;
  readonly tasksHost: string;
  /** The Cloud Storage emulator, `http://127.0.0.1:PORT` (the STORAGE_EMULATOR_HOST of the functions). */
  readonly storageUrl: string;
  /** The inbox's bucket of offloaded payloads, and the senders' bucket the functions accept claim-check references into. */
  readonly buckets: { readonly payloads: string; readonly senders: string };
  readonly functions: Readonly<Record<FunctionTarget, string>>;
  /** The operator console (inboxConsole with INBOX_CONSOLE_ACCESS=local): on 127.0.0.1 only, no sign-in. */
  readonly consoleUrl: string;
  /** The app the stack runs (INBOX_APP) and its topics and subscriptions, as created on the emulator (tools/local/peers.ts: topicOf, subscriptionOf). */
  readonly app: string;
  readonly topology: AppTopology;
  /** One log file per function. */
  readonly logDir: string;
  /** False when the stack uses emulators it did not start (an outage then only cuts the line). */
  readonly emulatorsStarted: boolean;
}

export interface FunctionLogCounts {
  readonly lines: number;
  readonly warnings: number;
  readonly errors: number;
  /** Push requests answered 5xx ("not acked: Pub/Sub will redeliver"). */
  readonly notAcked: number;
}

export interface StackStatus {
  readonly functions: Readonly<Record<FunctionTarget, FunctionLogCounts>>;
  /** The app's simulated peers (its local.ts), or null when it has none. */
  readonly peers: Readonly<Record<string, unknown>> | null;
  readonly relaySchedule: ScheduleStats;
  readonly sweepSchedule: ScheduleStats;
  readonly outages: number;
}

/** RESTARTED: the emulator process was stopped and started again (data kept); REFUSED: the line was cut. */
export interface OutageReport {
  readonly kind: 'RESTARTED' | 'REFUSED';
  readonly downMs: number;
  readonly totalMs: number;
}

export interface StackControl {
  info(): Promise<StackInfo>;
  status(): Promise<StackStatus>;
  /** Firestore unreachable for every function for about `downMs` (plus the restart); resolves when it is back. */
  firestoreOutage(downMs: number): Promise<OutageReport>;
  /** Cuts (`refuse`) or restores (`forward`) the receiver's line to Firestore only. */
  receiverLine(mode: 'forward' | 'refuse'): Promise<void>;
}

/** Where a running `npm start` leaves its control URL for the demo to find. */
export const STACK_FILE = join(REPO_ROOT, '.inbox-stack.json');

/** Serves `control` as JSON on 127.0.0.1 (GET /info, GET /status, POST /outage {downMs}, POST /receiver-line {mode}). */
export async function serveControl(control: StackControl, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const route = async (req: IncomingMessage): Promise<[number, unknown]> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/info') return [200, await control.info()];
    if (req.method === 'GET' && path === '/status') return [200, await control.status()];
    const body = req.method === 'POST' ? await readJson(req) : null;
    if (path === '/outage' && body !== null) {
      const downMs = Number((body as { downMs?: unknown }).downMs);
      if (!Number.isInteger(downMs) || downMs < 0 || downMs > 120_000)
        return [400, { error: 'downMs: an integer 0..120000' }];
      return [200, await control.firestoreOutage(downMs)];
    }
    if (path === '/receiver-line' && body !== null) {
      const mode = (body as { mode?: unknown }).mode;
      if (mode !== 'forward' && mode !== 'refuse') return [400, { error: 'mode: "forward" or "refuse"' }];
      await control.receiverLine(mode);
      return [200, { mode }];
    }
    return [404, { error: 'GET /info, GET /status, POST /outage {downMs}, POST /receiver-line {mode}' }];
  };
  const server: Server = createServer((req, res: ServerResponse) => {
    route(req).then(
      ([status, body]) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (err: unknown) =>
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: errorMessage(err) })),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('control server has no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A client of {@link serveControl}. */
export function controlClient(url: string): StackControl {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${json.error ?? ''}`);
    return json;
  };
  return {
    info: () => call('GET', '/info'),
    status: () => call('GET', '/status'),
    firestoreOutage: (downMs) => call('POST', '/outage', { downMs }),
    receiverLine: async (mode) => {
      await call('POST', '/receiver-line', { mode });
    },
  };
}

/** The control URL of a running `npm start`, if one answers. */
export async function findRunningStack(file = STACK_FILE): Promise<string | null> {
  if (!existsSync(file)) return null;
  try {
    const { controlUrl } = JSON.parse(readFileSync(file, 'utf8')) as { controlUrl?: string };
    if (typeof controlUrl !== 'string') return null;
    const response = await fetch(`${controlUrl}/info`, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? controlUrl : null;
  } catch {
    return null;
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 65_536) return null;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown;
  } catch {
    return null;
  }
}
