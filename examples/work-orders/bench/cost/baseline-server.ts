/**
 * A baseline of `npm run bench` (bench/three-way/baselines.ts: (a) naive
 * ack-in-catch, (b) nack + dead-letter) as its own process, so bench:cost
 * reads its CPU apart: the push handler correlates straight into the process
 * in one engine transaction, as the baselines do, and then creates the Cloud
 * Tasks of the jobs the correlation made (the invoice), as the relay does,
 * so the work order ends through the engine's runJob like this system's.
 * Run by bench/cost/run.ts with the stack's settings in its environment and
 * BASELINE_MODE=naive|nack; prints `READY <port>` once it listens.
 */
import { createServer } from 'node:http';
import { loadConfig } from '../../../../functions/src/config';
import { dispatchSettled } from '../../../../functions/src/jobs/dispatch';
import { createLogger } from '../../../../functions/src/log';
import { correlate } from '../../../../functions/src/engine/store/correlate';
import { runUnitOfWork } from '../../../../functions/src/engine/store/unit-of-work';
import { parsePushEnvelope } from '../../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../../local/names';
import { createRuntime } from '../../../../functions/src/runtime';

async function main(): Promise<void> {
  const mode = process.env.BASELINE_MODE === 'nack' ? 'nack' : 'naive';
  // The functions' own runtime: the same Firestore client settings, engine (models and handlers) and queues.
  const runtime = createRuntime(loadConfig(process.env));
  const db = runtime.db();
  const engine = await runtime.engine();
  const queues = {
    jobs: runtime.queue(process.env.INBOX_RUN_JOB_URL ?? ''),
    timers: runtime.timerQueue(process.env.INBOX_FIRE_TIMER_URL ?? ''),
  };
  const log = createLogger(() => undefined);
  const handle = async (body: unknown): Promise<number> => {
    const parsed = parsePushEnvelope(body);
    if (!parsed.ok) return 400;
    const draft = interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] });
    try {
      if (draft.kind === 'invalid') throw new Error(`invalid payload: ${draft.error}`);
      const { result } = await runUnitOfWork(db, (uow) =>
        correlate(uow, engine, {
          messageName: draft.messageName,
          correlationKey: draft.correlationKey,
          variables: draft.payload,
          now: new Date(),
          messageId: draft.id,
        }),
      );
      if (result.kind !== 'CORRELATED') throw new Error(result.kind);
      await dispatchSettled(queues, result, log);
      return 200;
    } catch {
      return mode === 'naive' ? 200 : 503;
    }
  };
  let requests = 0;
  const server = createServer((req, res) => {
    // GET: the push requests served so far, for the bench (not a push).
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ requests }));
      return;
    }
    requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(parseJson(Buffer.concat(chunks).toString('utf8'))).then((status) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}'),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`READY ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    void db.terminate().finally(() => process.exit(0));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
