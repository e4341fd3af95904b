import { SingleBar } from 'cli-progress';
import type { CliContext } from './context';

/** Runs `work` over items, 8 at a time, with a progress bar on stderr for people (none with --json or without a terminal). */
export async function withProgress<T>(ctx: CliContext, items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  // The stream comes with the io so tests can hand in a terminal.
  const stream = ctx.io.progress ?? process.stderr;
  const bar = !ctx.json && stream.isTTY === true && items.length > 1 ? new SingleBar({ stream, format: '{bar} {value}/{total}' }) : null;
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
