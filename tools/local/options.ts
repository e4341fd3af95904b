import { InvalidArgumentError } from 'commander';
import { errorMessage } from '../../functions/src/core/errors';

/** A commander option parser for a number in [min, max] (an integer if `integer`), with a message that says which. */
export function numberIn(min: number, max: number, integer = false): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(`${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    }
    return n;
  };
}

/**
 * Runs a command-line entry point: its number is the exit code; a commander
 * usage error exits 2 (0 for --help), anything else prints `[tag] message`
 * and exits 1.
 */
export function runMain(tag: string, main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const usage =
        err instanceof Error && 'exitCode' in err && typeof (err as { exitCode: unknown }).exitCode === 'number';
      if (usage) {
        process.exitCode = (err as { exitCode: number }).exitCode === 0 ? 0 : 2;
        return;
      }
      console.error(`[${tag}] ${errorMessage(err)}`);
      process.exitCode = 1;
    },
  );
}
