import type { Storage } from '@google-cloud/storage';
import { startStorageEmulator, type StorageEmulator } from '@inbox/storage-emulator';

/** A storage emulator started for one test file, with the client the code under test would use. */
export interface TestStorage {
  readonly emulator: StorageEmulator;
  /** `http://127.0.0.1:PORT`, the STORAGE_EMULATOR_HOST value. */
  readonly url: string;
  /** What a served child function needs in its environment to reach this emulator. */
  readonly env: Readonly<Record<string, string>>;
  /** A real `@google-cloud/storage` client on the emulator (made while STORAGE_EMULATOR_HOST points at it). */
  readonly client: Storage;
  /** Creates buckets through the real client (the emulator, like the API, answers 404 for a missing bucket). */
  createBuckets(...names: string[]): Promise<void>;
  /** Stops the emulator and restores STORAGE_EMULATOR_HOST as it was. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts an emulator, points STORAGE_EMULATOR_HOST of this process at it
 * (the client reads the variable when it is constructed, so in-process code
 * that builds its client afterwards uses it) and creates `buckets`. Call
 * `stop()` when done; {@link useTestStorage} wires both into jest's hooks.
 */
export async function startTestStorage(
  buckets: readonly string[] = [],
  projectId = 'storage-test',
): Promise<TestStorage> {
  const emulator = await startStorageEmulator();
  const before = process.env.STORAGE_EMULATOR_HOST;
  process.env.STORAGE_EMULATOR_HOST = emulator.url;
  // Loaded here, not at the top: a file that imports this helper but starts no emulator keeps the library unloaded.
  const { Storage: StorageClient } = require('@google-cloud/storage') as typeof import('@google-cloud/storage');
  const client = new StorageClient({ projectId });
  let stopped: Promise<void> | undefined;
  const storage: TestStorage = {
    emulator,
    url: emulator.url,
    env: { STORAGE_EMULATOR_HOST: emulator.url },
    client,
    async createBuckets(...names) {
      for (const name of names) await client.createBucket(name);
    },
    stop() {
      stopped ??= (async () => {
        if (process.env.STORAGE_EMULATOR_HOST === emulator.url) {
          if (before === undefined) delete process.env.STORAGE_EMULATOR_HOST;
          else process.env.STORAGE_EMULATOR_HOST = before;
        }
        await emulator.stop();
      })();
      return stopped;
    },
  };
  try {
    await storage.createBuckets(...buckets);
  } catch (err) {
    await storage.stop();
    throw err;
  }
  return storage;
}

/**
 * One emulator for the test file: started in beforeAll (with `buckets`),
 * stopped in afterAll. Read `.current` inside tests and hooks.
 */
export function useTestStorage(buckets: readonly string[] = []): { readonly current: TestStorage } {
  let current: TestStorage | undefined;
  beforeAll(async () => {
    current = await startTestStorage(buckets);
  });
  afterAll(async () => {
    await current?.stop();
  });
  return {
    get current(): TestStorage {
      if (current === undefined)
        throw new Error('useTestStorage: read .current inside a test or hook, after beforeAll');
      return current;
    },
  };
}
