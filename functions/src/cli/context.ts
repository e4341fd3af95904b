import type { Firestore } from '@google-cloud/firestore';
import { type Config, loadConfig } from '../config';
import { lazy } from '../core/lazy';
import { createRuntime, type Runtime } from '../runtime';

/** Where a command writes, and how it asks. Tests pass their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Asks a yes/no question; false when nobody can answer (no TTY). */
  confirm(question: string): Promise<boolean>;
  /** Where the progress bar of bulk changes goes, drawn only when it is a terminal. Default: stderr. */
  readonly progress?: NodeJS.WritableStream & { readonly isTTY?: boolean };
}

export interface CliContext {
  readonly config: Config;
  readonly runtime: Runtime;
  readonly db: () => Firestore;
  /** Closes the Firestore client if a command created it (a failure before that leaves nothing to close). */
  readonly close: () => Promise<void>;
  readonly io: CliIo;
  readonly json: boolean;
  readonly now: () => Date;
}

/**
 * The CLI reads the same configuration as the functions, so it works against
 * the emulators (FIRESTORE_EMULATOR_HOST) or a real project
 * (GOOGLE_CLOUD_PROJECT and application default credentials).
 */
export function cliContext(env: NodeJS.ProcessEnv, io: CliIo, json: boolean): CliContext {
  const config = loadConfig(env);
  const runtime = createRuntime(config, { keepVersions: false });
  let opened = false;
  const db = lazy(() => {
    opened = true;
    return runtime.db();
  });
  const close = async (): Promise<void> => {
    if (opened) await runtime.db().terminate();
  };
  return { config, runtime, db, close, io, json, now: () => new Date() };
}

/** A value for a table cell. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects returned above: value is a primitive (or a function), which TypeScript can only call {}
  return String(value);
}
