import { SingleBar } from 'cli-progress';
import type { CliContext } from './context';

/** Runs `work` over items, 8 at a time, with a progress bar on stderr for people (none with --json or without a terminal). */
export async function withProgress<T>(
  ctx: CliContext,
  items: readonly T[],
  work: (item: T) => Promise<void>,
): Promise<void> {
  // The stream comes with the io so tests can hand in a terminal.
  const stream = ctx.io.progress ?? process.stderr;
  const bar =
    !ctx.json && stream.isTTY === true && items.length > 1
      ? new SingleBar({ stream, format: '{bar} {value}/{total}' })
      : null;
  bar?.start(items.length, 0);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) {
      await work(items[i] as T);
      bar?.increment();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(8, items.length) }, worker));
  } finally {
    bar?.stop();
  }
}

/** A progress bar for work that goes page by page: total known up front (a count), advanced per page. */
export interface PageProgress {
  advance(by: number, payload: Readonly<Record<string, number>>): void;
  stop(): void;
}

/**
 * A bar on stderr for people (none with --json or without a terminal), as
 * {@link withProgress}; `format` may name payload tokens such as {deleted}.
 * The total may be off when documents change while the work runs (a count
 * is not a snapshot): the bar then grows its total instead of overflowing.
 */
export function pageProgress(
  ctx: CliContext,
  total: number,
  format: string,
  payload: Readonly<Record<string, number>>,
): PageProgress {
  const stream = ctx.io.progress ?? process.stderr;
  if (ctx.json || stream.isTTY !== true || total < 1) return { advance: () => undefined, stop: () => undefined };
  const bar = new SingleBar({ stream, format });
  let value = 0;
  let ceiling = total;
  bar.start(total, 0, payload);
  return {
    advance(by, next) {
      value += by;
      if (value > ceiling) {
        ceiling = value;
        bar.setTotal(ceiling);
      }
      bar.update(value, next);
    },
    stop: () => bar.stop(),
  };
}
