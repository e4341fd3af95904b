/** What one simulated Cloud Scheduler job has done so far. */
export interface ScheduleStats {
  readonly calls: number;
  readonly failures: number;
  readonly lastStatus: number | null;
  /** A call is under way (the chaos run kills a relay only then: mid-batch). */
  readonly inFlight: boolean;
}

export interface Schedule {
  stats(): ScheduleStats;
  /** Stops calling; resolves when the call in flight (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * A simulated Cloud Scheduler job: POSTs `{}` to `url` every `everyMs`, one
 * call at a time (the next one starts `everyMs` after the previous ended, as
 * a scheduler with a deadline would not pile calls up either).
 */
export function every(everyMs: number, url: string, timeoutMs = 60_000): Schedule {
  let calls = 0;
  let failures = 0;
  let lastStatus: number | null = null;
  let busy = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const controller = new AbortController();

  const call = async (): Promise<void> => {
    calls += 1;
    busy = true;
    try {
      const timeout = AbortSignal.timeout(timeoutMs);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.any([timeout, controller.signal]),
      });
      lastStatus = response.status;
      await response.arrayBuffer();
      if (!response.ok) failures += 1;
    } catch {
      lastStatus = null;
      failures += 1;
    } finally {
      busy = false;
    }
  };
  const next = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = call().finally(next);
    }, everyMs);
  };
  next();
  return {
    stats: () => ({ calls, failures, lastStatus, inFlight: busy }),
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      controller.abort();
      await inFlight;
    },
  };
}
