import type { Storage } from '@google-cloud/storage';
import { startStorageEmulator, type StorageEmulator } from '../src';

/** The emulator of one test file and a fresh real client per test, aimed at it by STORAGE_EMULATOR_HOST. */
export interface Harness {
  readonly emulator: StorageEmulator;
  /** A client made in this test's beforeEach, while STORAGE_EMULATOR_HOST points at the emulator. */
  readonly client: Storage;
}

/**
 * Starts one emulator for the file (beforeAll) and, for each test, sets
 * STORAGE_EMULATOR_HOST, makes a client and restores the variable after the
 * test. The client reads the variable in its constructor (it is the
 * documented emulator switch: it replaces the whole base URL, so it must
 * carry the scheme), which is why each test gets its own client.
 */
export function useHarness(): Harness {
  let emulator: StorageEmulator | undefined;
  let client: Storage | undefined;
  let before: string | undefined;
  beforeAll(async () => {
    emulator = await startStorageEmulator();
  });
  afterAll(async () => {
    await emulator?.stop();
  });
  beforeEach(() => {
    before = process.env.STORAGE_EMULATOR_HOST;
    process.env.STORAGE_EMULATOR_HOST = harness.emulator.url;
    const { Storage: Client } = require('@google-cloud/storage') as typeof import('@google-cloud/storage');
    client = new Client({ projectId: 'conformance' });
  });
  afterEach(() => {
    harness.emulator.faults.clear();
    if (before === undefined) delete process.env.STORAGE_EMULATOR_HOST;
    else process.env.STORAGE_EMULATOR_HOST = before;
  });
  const harness: Harness = {
    get emulator(): StorageEmulator {
      if (emulator === undefined) throw new Error('emulator not started');
      return emulator;
    },
    get client(): Storage {
      if (client === undefined) throw new Error('client not made');
      return client;
    },
  };
  return harness;
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code?: unknown; message: string; errors?: unknown }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: unknown; message: string; errors?: unknown };
  }
  throw new Error('expected the call to fail');
}
