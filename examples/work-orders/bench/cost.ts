/**
 * `npm run bench:cost`: what a work order costs. N work orders of
 * the app's model (bpmn/work-order-execution.bpmn at the repository's top level) run end to end on the local stack, once
 * through this system and once through each baseline of `npm run bench`
 * ((a) naive ack-in-catch, (b) nack + dead-letter, which correlate in the
 * push handler), counted at the wire per function (Firestore reads, writes,
 * deletes, index entries; Cloud Tasks operations; requests; Pub/Sub bytes;
 * CPU) and priced per 1,000 work orders. The model and its limits:
 * docs/cost.md.
 *
 * Flags: --n=200 --concurrency=8 --early=0 --designs=system,naive,nack --json (writes bench/results/cost.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { argNumber } from './pool';
import { PRICE_REGION, PRICES, PRICES_AS_OF } from './cost/prices';
import { functionTable, perHour, perWorkOrder, PRICE_NOTE, table } from './cost/report';
import { type CostDesign, type DesignCost, runCostDesign } from './cost/run';
import { measureVersionLookup, versionLookupLine } from './cost/version-lookup';

const N = argNumber('n', 200);
const CONCURRENCY = argNumber('concurrency', 8);
const EARLY = Number(process.argv.find((a) => a.startsWith('--early='))?.slice('--early='.length) ?? '0');
const DESIGNS = (
  process.argv.find((a) => a.startsWith('--designs='))?.slice('--designs='.length) ?? 'system,naive,nack'
).split(',') as CostDesign[];
const JSON_OUTPUT = process.argv.includes('--json');

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  if (!(EARLY >= 0 && EARLY <= 1)) throw new Error('--early must be a share between 0 and 1');
  for (const d of DESIGNS)
    if (!['system', 'naive', 'nack'].includes(d)) throw new Error(`--designs: unknown design ${d}`);
  const say = (line: string): void => console.error(`[cost] ${line}`);
  const results: DesignCost[] = [];
  for (const design of DESIGNS)
    results.push(
      await runCostDesign(design, {
        n: N,
        concurrency: CONCURRENCY,
        earlyRatio: EARLY,
        timeoutMs: 120_000,
        progress: say,
      }),
    );
  say('version lookup: a correlation into instances of the deployed and of an older version');
  const lookup = await measureVersionLookup();
  const rows = results.map(perWorkOrder);
  const system = rows.find((r) => r.design === 'system');
  const systemResult = results.find((r) => r.design === 'system');
  const hourly = systemResult === undefined ? null : perHour(systemResult);
  const incomplete = results
    .filter((r) => r.completed < r.n)
    .map((r) => `${r.design}: ${r.completed}/${r.n} COMPLETED`);
  const recovered = results.filter((r) => r.recoveryCalls > 0).map((r) => `${r.design}: ${r.recoveryCalls}`);
  const text = [
    `${N} work orders per design (providerEarlyRatio ${EARLY}); figures per work order.`,
    '',
    table(rows),
    ...(system === undefined ? [] : ['', 'This system by function, per work order:', '', functionTable(system)]),
    ...(hourly === null
      ? []
      : [
          '',
          `Not per work order: the scheduled relay and sweepJobs at one call a minute each, idle: per hour ${hourly.reads} reads, ${hourly.writes} writes, ${hourly.deletes} deletes, ${hourly.requests} requests, ${hourly.cpuMs} CPU ms: USD ${hourly.usd}/hour.`,
        ]),
    '',
    versionLookupLine(lookup),
    '',
    PRICE_NOTE,
    ...(recovered.length === 0
      ? []
      : [`Recovery relay+sweep calls made after 20 s without progress (counted above): ${recovered.join(', ')}.`]),
    ...(incomplete.length === 0
      ? []
      : ['', `WARNING: not every work order completed (${incomplete.join('; ')}): the figures divide by N.`]),
  ].join('\n');
  if (JSON_OUTPUT) {
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    const out = {
      settings: { n: N, concurrency: CONCURRENCY, earlyRatio: EARLY, designs: DESIGNS },
      machine: { cpus: cpus().length, node: process.version },
      at: new Date().toISOString(),
      prices: { asOf: PRICES_AS_OF, region: PRICE_REGION, table: PRICES },
      perWorkOrder: rows,
      scheduledPerHour: hourly,
      versionLookup: lookup,
      raw: results,
      table: text,
    };
    writeFileSync(join(dir, 'cost.json'), `${JSON.stringify(out, null, 2)}\n`);
  }
  console.log(`${text}${JSON_OUTPUT ? '\n\nbench/results/cost.json' : ''}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
