import * as os from 'node:os';

/** Something the cleanup registry can stop, asynchronously or in an 'exit' handler. */
export interface Cleanable {
  /** Graceful stop; must be idempotent. */
  stop(): Promise<void>;
  /** Last-resort synchronous kill (SIGKILL) for the 'exit' handler. */
  killSync(): void;
}

interface Registry {
  readonly live: Set<Cleanable>;
  /** Set while a SIGINT/SIGTERM-triggered stop is in progress. */
  stopping: Promise<void> | undefined;
}

/**
 * The registry lives on the `process` object under a global symbol so that
 * there is exactly one set of handlers per process, even when this module is
 * loaded more than once (jest loads globalSetup and globalTeardown through
 * separate module registries).
 */
const REGISTRY_KEY: unique symbol = Symbol.for('main.tools.emulators.cleanupRegistry');
type RegistryHost = NodeJS.Process & { [REGISTRY_KEY]?: Registry };

function registry(): Registry {
  const host: RegistryHost = process;
  const existing = host[REGISTRY_KEY];
  if (existing !== undefined) return existing;
  const created: Registry = { live: new Set(), stopping: undefined };
  host[REGISTRY_KEY] = created;
  installHandlers(created);
  return created;
}

function installHandlers(reg: Registry): void {
  // 'exit' runs synchronously only: SIGKILL whatever is still registered.
  process.on('exit', () => {
    for (const item of reg.live) item.killSync();
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    const exitCode = 128 + os.constants.signals[signal];
    if (reg.stopping !== undefined) {
      // Second Ctrl-C while stopping gracefully: stop being graceful.
      for (const item of reg.live) item.killSync();
      process.exit(exitCode);
    }
    reg.stopping = stopAllRegistered().finally(() => {
      reg.stopping = undefined;
      // Having a listener disables Node's default "terminate on signal". If
      // we are the only listener, restore that outcome; otherwise the other
      // listener (e.g. the CLI) decides when and how the process ends.
      if (process.listenerCount(signal) <= 1) process.exit(exitCode);
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Registers a started emulator; installs the process handlers on first use. */
export function register(item: Cleanable): void {
  registry().live.add(item);
}

/** Forgets a stopped emulator. */
export function unregister(item: Cleanable): void {
  registry().live.delete(item);
}

/** Stops everything still registered; failures are reported, not thrown. */
export async function stopAllRegistered(): Promise<void> {
  const results = await Promise.allSettled([...registry().live].map((item) => item.stop()));
  for (const r of results) {
    if (r.status === 'rejected') console.error('[emulators] cleanup failed:', r.reason);
  }
}
