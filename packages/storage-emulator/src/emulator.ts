import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiFailure, fail } from './api-error';
import { Faults, type LoggedRequest, type RequestFilter } from './faults';
import { failure, route, type Incoming, type Outgoing } from './routes';
import { Store } from './store';

/** An object as the emulator holds it (introspection for tests). */
export interface EmulatorObject {
  readonly bucket: string;
  readonly name: string;
  /** int64 as a decimal string, as the API reports it. */
  readonly generation: string;
  readonly contentType: string;
  readonly data: Buffer;
}

/** A running emulator. */
export interface StorageEmulator {
  /** "127.0.0.1:PORT". */
  readonly host: string;
  /** "http://127.0.0.1:PORT": the value for STORAGE_EMULATOR_HOST (the client needs the scheme, else it assumes https). */
  readonly url: string;
  readonly port: number;
  /** Fault hooks: `failNext(count, status?, filter?)`, `slow(ms, filter?)`, `clear()`. */
  readonly faults: Pick<Faults, 'failNext' | 'slow' | 'clear'>;
  /** Every request answered so far, oldest first (a copy). */
  requests(): LoggedRequest[];
  /** Empties the request log. */
  clearRequests(): void;
  /** Creates a bucket directly, as `POST /b` would (409 ApiFailure if it exists). */
  createBucket(name: string, project?: string): void;
  /** The names of the buckets, in order. */
  buckets(): string[];
  /** The live objects of a bucket, in name order (throws for a missing bucket). */
  objects(bucket: string): EmulatorObject[];
  /** Stops listening and closes open connections. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startStorageEmulator}. */
export interface StorageEmulatorOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** Buckets to create at start (project `local`). */
  readonly buckets?: readonly string[];
  /** Receives one line per request. Default: silent. */
  readonly log?: (line: string) => void;
}

/** The largest request body taken (the API's single-request uploads go to 5 TiB; tests need far less). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Starts a Cloud Storage JSON API emulator on 127.0.0.1. */
export async function startStorageEmulator(opts: StorageEmulatorOptions = {}): Promise<StorageEmulator> {
  const log = opts.log ?? ((): void => undefined);
  const store = new Store();
  for (const name of opts.buckets ?? []) store.createBucket(name, 'local');
  const faults = new Faults();
  const logged: LoggedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';

  const answer = async (req: Incoming): Promise<Outgoing> => {
    const routed = route(req);
    const delay = faults.delayFor(routed);
    if (delay > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, delay);
        timers.add(timer);
      });
    }
    const injected = faults.takeFailure(routed);
    let out: Outgoing;
    if (injected !== undefined) {
      out = failure(fail.injected(injected));
    } else {
      try {
        out = routed.run(store, origin);
      } catch (err) {
        if (!(err instanceof ApiFailure)) throw err;
        out = failure(err);
      }
    }
    const { method, path, query, bucket, object, op } = routed;
    logged.push({
      method,
      path,
      query,
      bucket,
      object,
      op,
      status: out.status,
      injected: injected !== undefined,
      at: Date.now(),
    });
    log(`${req.method} ${req.url} -> ${out.status}${injected === undefined ? '' : ' (injected)'}`);
    return out;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const incoming: Incoming = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const reply =
        size > MAX_BODY_BYTES
          ? Promise.resolve(failure(new ApiFailure(413, 'uploadTooLarge', `Request body over ${MAX_BODY_BYTES} bytes`)))
          : answer(incoming);
      reply
        .catch((err: unknown) =>
          failure(
            new ApiFailure(500, 'backendError', `emulator defect: ${err instanceof Error ? err.message : String(err)}`),
          ),
        )
        .then((out) => {
          if (res.destroyed) return;
          res.writeHead(out.status, { ...out.headers, 'content-length': String(out.body.length) });
          res.end(out.body);
        })
        .catch(() => undefined);
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  const host = `127.0.0.1:${port}`;
  origin = `http://${host}`;
  log(`storage emulator listening on ${origin}`);

  let stopping: Promise<void> | undefined;
  return {
    host,
    url: origin,
    port,
    faults: {
      failNext: (count?: number, status?: number, filter?: RequestFilter) => faults.failNext(count, status, filter),
      slow: (ms: number, filter?: RequestFilter) => faults.slow(ms, filter),
      clear: () => faults.clear(),
    },
    requests: () => [...logged],
    clearRequests: () => {
      logged.length = 0;
    },
    createBucket: (name, project = 'local') => void store.createBucket(name, project),
    buckets: () => store.allBuckets().map((b) => b.name),
    objects: (bucket) =>
      [...store.bucket(bucket).objects.values()]
        .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))
        .map((o) => ({
          bucket: o.bucket,
          name: o.name,
          generation: String(o.generation),
          contentType: o.contentType,
          data: o.data,
        })),
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        faults.clear();
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
