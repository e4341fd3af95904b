import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudTasksClient } from '@google-cloud/tasks';
import {
  emulatorClient,
  startCloudTasksEmulator,
  type CloudTasksEmulator,
  type CloudTasksEmulatorOptions,
} from '../src';

/** One request the dispatch target received. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** Date.now() when the request had fully arrived. */
  readonly at: number;
}

/**
 * How the target answers the n-th request (0-based, over all requests):
 * a status, or 'hang' to never answer. May be async to hold the request open.
 */
export type Responder = (req: Received, index: number) => number | 'hang' | Promise<number | 'hang'>;

/** A local HTTP server standing in for the task handler (Cloud Function / Cloud Run). */
export interface Target {
  readonly base: string;
  readonly received: Received[];
  /** Requests currently being handled, and the most seen at once. */
  readonly concurrency: { current: number; max: number };
  respondWith(responder: Responder): void;
  close(): Promise<void>;
}

export async function startTarget(responder: Responder = () => 200): Promise<Target> {
  let respond = responder;
  const received: Received[] = [];
  const concurrency = { current: 0, max: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = received.push(r) - 1;
      concurrency.current += 1;
      concurrency.max = Math.max(concurrency.max, concurrency.current);
      void Promise.resolve(respond(r, index)).then((answer) => {
        if (answer === 'hang') return;
        concurrency.current -= 1;
        res.statusCode = answer;
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    concurrency,
    respondWith: (next) => {
      respond = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A URL on which nothing listens (bound, then released). */
export async function deadUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/dead`;
}

/** Polls `condition` until it is truthy; fails with `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves after `ms`; for a target that answers late, never for waiting in a test. */
export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const PARENT = 'projects/test-project/locations/europe-west1';

let counter = 0;
/** A queue name no other test uses. */
export function uniqueQueue(prefix = 'q'): string {
  counter += 1;
  return `${PARENT}/queues/${prefix}-${process.pid}-${counter}`;
}

/** The gRPC status code of a rejected client call. */
export async function codeOf(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
  } catch (err) {
    const code: unknown = (err as { code?: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  }
  throw new Error('expected the call to fail');
}

/** What a suite runs against: one emulator, a client aimed at it, one dispatch target. */
export interface Suite {
  readonly emulator: CloudTasksEmulator;
  readonly client: CloudTasksClient;
  readonly target: Target;
}

/** Starts a suite's emulator (with `options`), its client and its target. */
export async function startSuite(options: CloudTasksEmulatorOptions = {}): Promise<Suite> {
  const emulator = await startCloudTasksEmulator(options);
  return { emulator, client: emulatorClient(emulator.host), target: await startTarget() };
}

/** Stops what {@link startSuite} started: the client first, then the emulator and the target. */
export async function stopSuite(suite: Suite): Promise<void> {
  await suite.client.close();
  await suite.emulator.stop();
  await suite.target.close();
}
