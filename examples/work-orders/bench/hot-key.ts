/**
 * `npm run bench:hot-key`: what one hot correlation key costs the relay, on
 * the Firestore emulator, in one run (docs/scale.md quotes it).
 *
 * Every scenario is a project of its own on the same emulator, with
 * instances of bench/fixtures/hot-key.bpmn: a token that takes `expected`
 * WorkOrderCompleted messages of its work order one after the other
 * (repeated waiting), so every message of a hot key is one the process
 * accepts. M messages (--m, default 200) go either to ONE key (one
 * instance expecting M) or to M keys (M instances expecting one each).
 *
 * 1. Backlog: the M messages are stored first (as the receiver stores them),
 *    then drained by relayBatch with the deployed settings (parallelism 8,
 *    200 candidates a round, 16 shards), as a scheduled relayInbox call runs
 *    it. "one key" also with 4 relay calls at once, and without the buffer
 *    (an ablation, not a deployable setting: one transaction per message).
 * 2. Fast path: each message is stored and at once relayed by its own
 *    relayOne call (what the receiver's fast-path task makes relayInbox do),
 *    --concurrency (16) at a time; a relayBatch then drains what was held
 *    back. Reads per message, every transaction attempt included (the relay
 *    summaries' counters), show the contention.
 * 3. Shards: the spread backlog stored and relayed with INBOX_SHARDS=1
 *    against 16: the candidate round's time and the drain rate. The
 *    emulator has no tablets, so it shows the query side only; the write
 *    ceiling the shards lift (about 500 writes/s per index on a growing
 *    field) exists only on Firestore itself.
 * After one unmeasured run of four scenarios (warm-up), halves in mirrored
 * order (a, …, b) so drift hits both sides. Exits 1 if a
 * message is not DONE or an instance did not count exactly its messages.
 *
 * Flags: --m=200 --concurrency=16 --json
 */
import type { Firestore } from '@google-cloud/firestore';
import { DEFAULTS, loadConfig } from '../../../functions/src/config';
import type { Engine } from '../../../functions/src/engine/engine';
import { createFirestore } from '../../../functions/src/firestore';
import { createLogger } from '../../../functions/src/log';
import { findCandidates } from '../../../functions/src/relay/candidates';
import { account, emptySummary, relayBatch, type RelaySummary } from '../../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps } from '../../../functions/src/relay/relay-one';
import type { SettledQueues } from '../../../functions/src/jobs/dispatch';
import { useEmulators } from '../../../tools/local/use-emulators';
import { argNumber, runPool } from './pool';
import { checkDrained, type DrainCheck, hotKeyEngine, startHotKeyInstance, storeReport } from './hot-key-setup';
import { addSummary, round } from './relay-stats';

const M = argNumber('m', 200);
const CONCURRENCY = argNumber('concurrency', 16);
const JSON_OUTPUT = process.argv.includes('--json');
const progress = (line: string): void => void process.stderr.write(`# ${line}\n`);

/** The model has no async steps and no timers: nothing is ever enqueued, but relayBatch wants queues. */
const NO_QUEUES: SettledQueues = {
  jobs: { enqueue: () => Promise.resolve('CREATED') },
  timers: { enqueue: () => Promise.resolve('CREATED') },
};

interface Scenario {
  readonly name: string;
  /** ONE key (one instance expecting M) or M keys (one message each). */
  readonly oneKey: boolean;
  readonly mode: 'backlog' | 'fast';
  readonly shards: number;
  readonly buffered: boolean;
  /** Relay calls at once (backlog mode). */
  readonly relays: number;
}

interface Outcome {
  readonly scenario: Scenario;
  readonly seconds: number;
  readonly perSecond: number;
  readonly summary: RelaySummary;
  /** Fast path: what each message's own relayOne call answered. */
  readonly fastResults: Record<string, number>;
  /** Backlog mode: one candidate round (the query alone) on the full backlog, ms. */
  readonly candidateRoundMs: number | null;
  readonly check: DrainCheck;
}

async function runScenario(
  s: Scenario,
  label: string,
  run: string,
  engines: { buffered: Engine; bare: Engine },
): Promise<Outcome> {
  const project = `hotkey-${s.name.replace(/[^a-z0-9]+/g, '-')}-${label}-${run}`;
  const db: Firestore = createFirestore(project);
  try {
    const engine = s.buffered ? engines.buffered : engines.bare;
    const config = loadConfig({
      GOOGLE_CLOUD_PROJECT: project,
      INBOX_PUSH_AUTH: 'disabled',
      INBOX_SHARDS: String(s.shards),
    });
    const deps: RelayDeps = {
      db,
      engine,
      policy: config.relay.policy,
      retentionMs: config.relay.retentionMs,
      transactionTimeoutMs: config.relay.transactionTimeoutMs,
      now: () => new Date(),
      random: Math.random,
    };
    const log = createLogger(() => undefined);
    // Message i: its key and its place in the key's order.
    const keyOf = (i: number): string => (s.oneKey ? `WO-hot-${label}` : `WO-${label}-${i}`);
    const seqOf = (i: number): number => (s.oneKey ? i : 0);
    const instances = new Map<string, number>();
    const keys = s.oneKey ? 1 : M;
    await runPool(keys, 16, async (k) => {
      instances.set(await startHotKeyInstance(db, engine, keyOf(k), s.oneKey ? M : 1), s.oneKey ? M : 1);
    });
    const base = Date.now() - 60_000;
    const store = (i: number): Promise<string> => storeReport(db, keyOf(i), seqOf(i), s.shards, new Date(base + i));
    let candidateRoundMs: number | null = null;
    if (s.mode === 'backlog') {
      await runPool(M, 16, async (i) => void (await store(i)));
      const queried = Date.now();
      await findCandidates(db, s.shards, new Date(), Math.ceil(DEFAULTS.INBOX_RELAY_BATCH_SIZE / s.shards));
      candidateRoundMs = Date.now() - queried;
    }
    const summary = emptySummary();
    const fastResults: Record<string, number> = {};
    const drain = async (relays: number): Promise<void> => {
      // Calls keep coming (the scheduler, the next tick) until a round finds nothing.
      for (let call = 0; call < 50; call++) {
        const batch = await Promise.all(
          Array.from({ length: relays }, () =>
            relayBatch(deps, NO_QUEUES, log, {
              budgetMs: config.relay.budgetMs,
              parallelism: config.relay.parallelism,
              batchSize: config.relay.batchSize,
              shards: s.shards,
            }),
          ),
        );
        for (const b of batch) addSummary(summary, b);
        if (batch.every((b) => b.candidates === 0)) return;
      }
    };
    const started = process.hrtime.bigint();
    if (s.mode === 'fast') {
      await runPool(M, CONCURRENCY, async (i) => {
        const id = await store(i);
        const result = await relayOne(deps, id);
        const kind = result.kind === 'DECIDED' ? `DECIDED ${result.decision.kind}` : result.kind;
        fastResults[kind] = (fastResults[kind] ?? 0) + 1;
        await account(summary, id, result, deps, NO_QUEUES, log);
      });
    }
    await drain(s.relays);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const check = await checkDrained(db, M, instances);
    return { scenario: s, seconds, perSecond: M / seconds, summary, fastResults, candidateRoundMs, check };
  } finally {
    await db.terminate();
  }
}

const scenario = (name: string, over: Partial<Scenario>): Scenario => ({
  name,
  oneKey: false,
  mode: 'backlog',
  shards: 16,
  buffered: true,
  relays: 1,
  ...over,
});
const SPREAD = scenario('backlog, M keys', {});
const HOT = scenario('backlog, one key', { oneKey: true });
const HOT_RELAYS = scenario('backlog, one key, 4 relays', { oneKey: true, relays: 4 });
const HOT_BARE = scenario('backlog, one key, no buffer', { oneKey: true, buffered: false });
const SPREAD_1 = scenario('backlog, M keys, 1 shard', { shards: 1 });
const FAST_SPREAD = scenario('fast path, M keys', { mode: 'fast' });
const FAST_HOT = scenario('fast path, one key', { mode: 'fast', oneKey: true });
/** Mirrored: every pair compared runs once before and once after the other. */
const ORDER: ReadonlyArray<readonly [Scenario, string]> = [
  [SPREAD, 'a'],
  [HOT, 'a'],
  [HOT_RELAYS, 'a'],
  [HOT_BARE, 'a'],
  [SPREAD_1, 'a'],
  [SPREAD_1, 'b'],
  [HOT_BARE, 'b'],
  [HOT_RELAYS, 'b'],
  [HOT, 'b'],
  [SPREAD, 'b'],
  [FAST_SPREAD, 'a'],
  [FAST_HOT, 'a'],
  [FAST_HOT, 'b'],
  [FAST_SPREAD, 'b'],
];

/** Both halves of a scenario together: messages over seconds, counters summed. */
function combined(outcomes: readonly Outcome[], s: Scenario) {
  const mine = outcomes.filter((o) => o.scenario === s);
  const seconds = mine.reduce((n, o) => n + o.seconds, 0);
  const summary = emptySummary();
  for (const o of mine) addSummary(summary, o.summary);
  const fast: Record<string, number> = {};
  for (const o of mine) for (const [k, v] of Object.entries(o.fastResults)) fast[k] = (fast[k] ?? 0) + v;
  const messages = M * mine.length;
  const rounds = mine.map((o) => o.candidateRoundMs).filter((v): v is number => v !== null);
  return {
    name: s.name,
    messages,
    seconds: round(seconds, 2),
    perSecond: round(messages / seconds, 1),
    readsPerMessage: round(summary.reads / messages, 2),
    writesPerMessage: round(summary.writes / messages, 2),
    candidateReadsPerMessage: round(summary.candidateReads / messages, 2),
    correlated: summary.correlated,
    consumedFromBuffer: summary.consumedFromBuffer,
    skipped: summary.skipped,
    heldBackForOrder: summary.skippedForOrder,
    technicalFailures: summary.technicalFailures,
    retried: summary.retried,
    relayRounds: summary.rounds,
    candidateRoundMs: rounds.length === 0 ? null : round(rounds.reduce((a, b) => a + b, 0) / rounds.length, 1),
    fastResults: fast,
  };
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const emulators = await useEmulators();
  try {
    const engines = { buffered: await hotKeyEngine(true), bare: await hotKeyEngine(false) };
    const run = Date.now().toString(36);
    // Not counted: the first scenarios of a run pay for the JIT, the connections and the emulator's warm-up.
    for (const s of [SPREAD, HOT, FAST_SPREAD, FAST_HOT]) {
      const o = await runScenario(s, 'warm', run, engines);
      progress(
        `warm-up ${s.name}: ${o.seconds.toFixed(2)} s${o.check.ok ? '' : ` NOT DRAINED ${JSON.stringify(o.check)}`}`,
      );
    }
    const outcomes: Outcome[] = [];
    for (const [s, label] of ORDER) {
      const o = await runScenario(s, label, run, engines);
      progress(
        `${s.name} (${label}): ${M} messages in ${o.seconds.toFixed(2)} s, ${o.perSecond.toFixed(1)}/s${o.check.ok ? '' : ` NOT DRAINED ${JSON.stringify(o.check)}`}`,
      );
      outcomes.push(o);
    }
    const rows = [SPREAD, HOT, HOT_RELAYS, HOT_BARE, SPREAD_1, FAST_SPREAD, FAST_HOT].map((s) => combined(outcomes, s));
    const rate = (s: Scenario): number => rows.find((r) => r.name === s.name)?.perSecond ?? Number.NaN;
    const row = (s: Scenario) => rows.find((r) => r.name === s.name);
    const ratios = {
      'backlog: one key / M keys (msg/s)': round(rate(HOT) / rate(SPREAD), 2),
      'backlog: one key, 4 relays / one key, 1 relay (msg/s)': round(rate(HOT_RELAYS) / rate(HOT), 2),
      'backlog: one key without buffer / M keys (msg/s)': round(rate(HOT_BARE) / rate(SPREAD), 2),
      'fast path: one key / M keys (msg/s)': round(rate(FAST_HOT) / rate(FAST_SPREAD), 2),
      'fast path: one key / M keys (transaction reads per message)': round(
        (row(FAST_HOT)?.readsPerMessage ?? Number.NaN) / (row(FAST_SPREAD)?.readsPerMessage ?? Number.NaN),
        2,
      ),
      'shards: 1 / 16 (drain msg/s)': round(rate(SPREAD_1) / rate(SPREAD), 2),
      'shards: 1 / 16 (one candidate round, ms)': round(
        (row(SPREAD_1)?.candidateRoundMs ?? Number.NaN) / (row(SPREAD)?.candidateRoundMs ?? Number.NaN),
        2,
      ),
    };
    const failed = outcomes.filter((o) => !o.check.ok);
    const result = {
      m: M,
      concurrency: CONCURRENCY,
      relayParallelism: DEFAULTS.INBOX_RELAY_PARALLELISM,
      rows,
      ratios,
      ok: failed.length === 0,
    };
    if (JSON_OUTPUT) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      process.stdout.write(
        `bench:hot-key: M=${M} messages per scenario half, fast-path concurrency ${CONCURRENCY}, relay parallelism ${DEFAULTS.INBOX_RELAY_PARALLELISM}\n\n`,
      );
      for (const r of rows) {
        const fast =
          Object.keys(r.fastResults).length === 0 ? '' : `  fast-path answers ${JSON.stringify(r.fastResults)}`;
        process.stdout.write(
          `${r.name.padEnd(30)} ${String(r.perSecond).padStart(7)} msg/s  tx reads/msg ${r.readsPerMessage}  tx writes/msg ${r.writesPerMessage}  candidate reads/msg ${r.candidateReadsPerMessage}` +
            `  correlated ${r.correlated} via buffer ${r.consumedFromBuffer} skipped ${r.skipped} held back ${r.heldBackForOrder} failures ${r.technicalFailures} rounds ${r.relayRounds}` +
            `${r.candidateRoundMs === null ? '' : `  candidate round ${r.candidateRoundMs} ms`}${fast}\n`,
        );
      }
      process.stdout.write('\nratios (same run):\n');
      for (const [k, v] of Object.entries(ratios)) process.stdout.write(`  ${k}: ${v}\n`);
      if (failed.length > 0)
        process.stdout.write(
          `\nNOT DRAINED: ${failed.map((o) => `${o.scenario.name} ${JSON.stringify(o.check)}`).join('; ')}\n`,
        );
    }
    process.exitCode = failed.length === 0 ? 0 : 1;
  } finally {
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
