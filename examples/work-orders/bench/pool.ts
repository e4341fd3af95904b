import { type Agent, request } from 'node:http';

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function runPool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Peak resident set size (VmHWM) of a process, in bytes; Linux only. */
export async function peakRss(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+)\s+kB/.exec(status);
  if (match?.[1] === undefined) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * The number a `--name=N` flag gives, else `fallback`. Positive unless
 * `zero` says 0 means something (no outage, no delay): then 0 is taken too.
 * `--name=` alone is refused rather than read as 0 (Number('') is 0).
 */
export function argNumber(name: string, fallback: number, options: { readonly zero?: boolean } = {}): number {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  const text = flag?.slice(name.length + 3).trim();
  const value = text === undefined ? fallback : text === '' ? Number.NaN : Number(text);
  const zero = options.zero === true;
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zero))
    throw new Error(`--${name} must be a ${zero ? 'number of 0 or more' : 'positive number'}`);
  return value;
}

/** CPU time (user + system) a process has used so far, in ms; Linux only. */
export async function cpuMs(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th of those.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Current resident set size (VmRSS) of a process, in bytes; Linux only. */
export async function currentRss(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  if (match?.[1] === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * Starts a new peak (VmHWM := current RSS) so one process's peak can be read
 * per phase of a run (Linux >= 4.0: writing 5 to clear_refs).
 */
export async function resetPeakRss(pid: number): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/** A JSON POST over a keep-alive agent (the lean load generator of the receiver benches): the status and the answer's text. */
export function postJson(url: string, agent: Agent, body: string | Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
