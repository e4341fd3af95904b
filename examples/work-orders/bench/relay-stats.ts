import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism, cpus, totalmem } from 'node:os';
import type { RelaySummary } from '../../../functions/src/relay/relay-batch';

/** Nearest-rank percentile of sorted values (p in (0, 100]). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** CPU time (user + system) of this process so far, ms. */
export function ownCpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** Pid of an emulator's JVM listening on `host` (HOST:PORT), found in /proc; null if not found (e.g. not local). */
export async function emulatorPid(kind: 'firestore' | 'pubsub', host: string): Promise<number | null> {
  const port = host.slice(host.lastIndexOf(':') + 1);
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const args = cmdline.split('\0');
    if (args[0]?.endsWith('java') === true && cmdline.includes(kind) && args.includes(`--port=${port}`))
      return Number(entry);
  }
  return null;
}

/** Busy and total CPU time of the whole machine so far, ms (from /proc/stat; all cores). */
export async function machineCpuMs(): Promise<{ busy: number; total: number }> {
  const first = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = first.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: ((total - idle) * 1000) / 100, total: (total * 1000) / 100 };
}

/** The machine the figures come from. */
export function machine(): Record<string, unknown> {
  return {
    nproc: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: Number((totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

export const round = (value: number, digits = 0): number => Number(value.toFixed(digits));

/** Adds one relay call's summary to a running total. */
export function addSummary(total: RelaySummary, s: RelaySummary): void {
  for (const k of [
    'candidates',
    'correlated',
    'retried',
    'skippedForOrder',
    'skipped',
    'technicalFailures',
    'consumedFromBuffer',
    'reads',
    'writes',
    'candidateReads',
    'rounds',
    'durationMs',
  ] as const)
    total[k] += s[k];
  for (const [reason, count] of Object.entries(s.parked)) total.parked[reason] = (total.parked[reason] ?? 0) + count;
}
