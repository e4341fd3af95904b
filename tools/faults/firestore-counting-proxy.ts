/**
 * A counting proxy in front of the Firestore emulator: every call passes
 * through unchanged, and the Firestore v1 messages are decoded (with the
 * descriptor @google-cloud/firestore ships) to count what Firestore bills,
 * at the wire, so every transaction attempt and every retry is in it:
 *
 * - reads: each `found` and each `missing` of BatchGetDocuments; the
 *   documents RunQuery returns, 1 for a query that returns none; for
 *   RunAggregationQuery 1 per started 1,000 counted entries (at least 1);
 *   the documents of ListDocuments (at least 1);
 * - writes and deletes: each write of a Commit or BatchWrite that succeeded
 *   (a failed or aborted commit writes nothing): `update` (split into
 *   creates, those with an exists=false precondition, and updates), a
 *   transform on its own (a write too), `delete`;
 * - index entries: of each written document's fields, against the project's
 *   firestore.indexes.json (see firestore-index-entries.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as protobuf from 'protobufjs';
import { collectionOf, indexEntries, type IndexConfig, type WireValue } from './firestore-index-entries';
import { startGrpcTap, type TappedCall } from './grpc-tap';

/** What went through one proxy so far. */
export interface FirestoreCounts {
  /** Billed document reads (the sum of the four below). */
  reads: number;
  readsFound: number;
  readsMissing: number;
  queryReads: number;
  aggregationReads: number;
  /** Billed document writes: creates + updates + transform-only writes. */
  writes: number;
  creates: number;
  updates: number;
  transformsOnly: number;
  deletes: number;
  /** Index entries of the written documents' fields. */
  indexEntries: number;
  /** Commits (and BatchWrites) answered OK / not OK; the writes of the latter are not counted. */
  commits: number;
  failedCommits: number;
  /** Calls by method (every attempt). */
  calls: Record<string, number>;
  /** Messages the proxy could not decode (compressed): should stay 0. */
  undecoded: number;
}

export interface FirestoreCountingProxy {
  readonly host: string;
  counts(): FirestoreCounts;
  /** Starts from zero again. */
  reset(): void;
  close(): Promise<void>;
}

const empty = (): FirestoreCounts => ({
  reads: 0,
  readsFound: 0,
  readsMissing: 0,
  queryReads: 0,
  aggregationReads: 0,
  writes: 0,
  creates: 0,
  updates: 0,
  transformsOnly: 0,
  deletes: 0,
  indexEntries: 0,
  commits: 0,
  failedCommits: 0,
  calls: {},
  undecoded: 0,
});

/** The Firestore v1 descriptor JSON the client library ships (build/protos/v1.json), found through its package. */
function firestoreRoot(): protobuf.Root {
  const pkg = require.resolve('@google-cloud/firestore/package.json');
  const descriptor = JSON.parse(
    readFileSync(join(pkg, '..', 'build', 'protos', 'v1.json'), 'utf8'),
  ) as protobuf.INamespace;
  return protobuf.Root.fromJSON(descriptor);
}

let root: protobuf.Root | null = null;
const type = (name: string): protobuf.Type => {
  root ??= firestoreRoot();
  return root.lookupType(`google.firestore.v1.${name}`);
};
const decode = (name: string, bytes: Buffer): Record<string, unknown> =>
  type(name).toObject(type(name).decode(bytes), { longs: Number, oneofs: false, defaults: false });

interface WireWrite {
  readonly update?: { readonly name?: string; readonly fields?: Readonly<Record<string, WireValue>> };
  readonly delete?: string;
  readonly transform?: { readonly document?: string };
  readonly updateMask?: { readonly fieldPaths?: readonly string[] };
  readonly currentDocument?: { readonly exists?: boolean };
}

/** The fields of an update that are written: all of them, or those named by its mask (a merge or update()). */
function writtenFields(w: WireWrite): Record<string, WireValue> {
  const fields = w.update?.fields ?? {};
  const mask = w.updateMask?.fieldPaths;
  if (mask === undefined) return { ...fields };
  const top = new Set(mask.map((p) => p.split('.')[0] ?? ''));
  return Object.fromEntries(Object.entries(fields).filter(([k]) => top.has(k)));
}

/** Adds one finished call to `c`. Exported for the tests of the counting rules. */
export function countCall(
  c: FirestoreCounts,
  config: IndexConfig,
  call: Pick<TappedCall, 'method' | 'requests' | 'responses' | 'status'>,
): void {
  c.calls[call.method] = (c.calls[call.method] ?? 0) + 1;
  switch (call.method) {
    case 'BatchGetDocuments':
      for (const r of call.responses) {
        const m = decode('BatchGetDocumentsResponse', r);
        if (m.found !== undefined) c.readsFound += 1;
        if (m.missing !== undefined) c.readsMissing += 1;
      }
      break;
    case 'RunQuery': {
      const docs = call.responses.filter((r) => decode('RunQueryResponse', r).document !== undefined).length;
      c.queryReads += Math.max(1, docs);
      break;
    }
    case 'RunAggregationQuery': {
      let entries = 0;
      for (const r of call.responses) {
        const fields =
          (
            decode('RunAggregationQueryResponse', r).result as
              { aggregateFields?: Record<string, WireValue> } | undefined
          )?.aggregateFields ?? {};
        for (const v of Object.values(fields))
          if (v.integerValue !== undefined) entries = Math.max(entries, Number(v.integerValue));
      }
      c.aggregationReads += Math.max(1, Math.ceil(entries / 1000));
      break;
    }
    case 'ListDocuments': {
      const docs = call.responses.reduce(
        (n, r) => n + ((decode('ListDocumentsResponse', r).documents as unknown[] | undefined)?.length ?? 0),
        0,
      );
      c.queryReads += Math.max(1, docs);
      break;
    }
    case 'Commit':
    case 'BatchWrite': {
      const request = call.requests[0];
      if (request === undefined) break;
      const writes =
        (decode(call.method === 'Commit' ? 'CommitRequest' : 'BatchWriteRequest', request).writes as
          WireWrite[] | undefined) ?? [];
      if (call.status !== 0) {
        c.failedCommits += 1;
        break;
      }
      c.commits += 1;
      // BatchWrite answers a status per write: only those that applied count.
      const statuses =
        call.method === 'BatchWrite' && call.responses[0] !== undefined
          ? ((decode('BatchWriteResponse', call.responses[0]).status as Array<{ code?: number }> | undefined) ?? [])
          : [];
      writes.forEach((w, i) => {
        if ((statuses[i]?.code ?? 0) !== 0) return;
        if (w.delete !== undefined) c.deletes += 1;
        else if (w.update !== undefined) {
          if (w.currentDocument?.exists === false) c.creates += 1;
          else c.updates += 1;
          c.indexEntries += indexEntries(config, collectionOf(w.update.name ?? ''), writtenFields(w));
        } else if (w.transform !== undefined) c.transformsOnly += 1;
      });
      break;
    }
    default:
      break;
  }
  c.reads = c.readsFound + c.readsMissing + c.queryReads + c.aggregationReads;
  c.writes = c.creates + c.updates + c.transformsOnly;
}

/** The project's index configuration (firestore.indexes.json at the repository root). */
export function projectIndexConfig(): IndexConfig {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'firestore.indexes.json'), 'utf8')) as IndexConfig;
}

/** Starts a counting proxy in front of the Firestore emulator at `target`. */
export async function startFirestoreCountingProxy(
  target: string,
  config: IndexConfig = projectIndexConfig(),
): Promise<FirestoreCountingProxy> {
  let c = empty();
  const tap = await startGrpcTap(target, (call) => {
    c.undecoded += call.compressed;
    try {
      countCall(c, config, call);
    } catch {
      c.undecoded += 1;
    }
  });
  return {
    host: tap.host,
    counts: () => structuredClone(c),
    reset: () => {
      c = empty();
    },
    close: () => tap.close(),
  };
}
