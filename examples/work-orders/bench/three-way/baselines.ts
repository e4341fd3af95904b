/**
 * BASELINES, for `npm run bench` only: never exported from functions/, never
 * deployed. The two receivers most teams write instead of an inbox, both
 * correlating straight into the process in the push handler (one Firestore
 * transaction through the same engine as this system):
 *
 * - `naive`: acks whatever happens; a failure is logged and the message is
 *   gone (the article's "second mistake");
 * - `nack`: answers 5xx on any failure, so Pub/Sub redelivers per the retry
 *   policy and, after the maximum attempts, moves the message to the
 *   dead-letter topic (the article's Variant 1). Business rejections are
 *   retried like outages: nothing tells them apart.
 */
import type { Firestore } from '@google-cloud/firestore';
import { createServer, type Server } from 'node:http';
import type { Engine } from '../../../../functions/src/engine/engine';
import { correlate } from '../../../../functions/src/engine/store/correlate';
import { runUnitOfWork } from '../../../../functions/src/engine/store/unit-of-work';
import { parsePushEnvelope } from '../../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../../local/names';
import { errorMessage } from '../../../../functions/src/core/errors';

export type BaselineMode = 'naive' | 'nack';

/** What the baseline did, per inbox-style message id (the same id this system would use). */
export interface BaselineLedger {
  /** Correlated: when, and the reads + writes of its transaction. */
  readonly correlated: Map<string, { readonly at: number; readonly ops: number }>;
  /** Last failure per message (acked anyway by `naive`, nacked by `nack`). */
  readonly failures: Map<string, string>;
  requests: number;
  ops: number;
}

export interface BaselineServer {
  readonly url: string;
  readonly ledger: BaselineLedger;
  readonly close: () => Promise<void>;
}

export async function startBaseline(mode: BaselineMode, db: Firestore, engine: Engine): Promise<BaselineServer> {
  const ledger: BaselineLedger = { correlated: new Map(), failures: new Map(), requests: 0, ops: 0 };
  const handle = async (body: unknown): Promise<number> => {
    const parsed = parsePushEnvelope(body);
    if (!parsed.ok) return 400;
    const draft = interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] });
    const id = draft.id;
    try {
      if (draft.kind === 'invalid') throw new Error(`invalid payload: ${draft.error}`);
      const { result, stats } = await runUnitOfWork(db, (uow) =>
        correlate(uow, engine, {
          messageName: draft.messageName,
          correlationKey: draft.correlationKey,
          variables: draft.payload,
          now: new Date(),
          messageId: id,
        }),
      );
      ledger.ops += stats.reads + stats.writes;
      if (result.kind !== 'CORRELATED')
        throw new Error(result.kind === 'AMBIGUOUS' ? `ambiguous: ${result.count} waiting` : 'no waiting instance');
      if (!ledger.correlated.has(id)) ledger.correlated.set(id, { at: Date.now(), ops: stats.reads + stats.writes });
      ledger.failures.delete(id);
      return 200;
    } catch (err) {
      ledger.failures.set(id, errorMessage(err));
      return mode === 'naive' ? 200 : 503;
    }
  };
  const server: Server = createServer((req, res) => {
    ledger.requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(parseJson(Buffer.concat(chunks).toString('utf8'))).then((status) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}'),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    ledger,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
