/**
 * A Cloud Storage JSON API emulator for tests and local runs: what the real
 * `@google-cloud/storage` client needs for single-request uploads with
 * generation preconditions, reads pinned to a generation, metadata, deletes
 * and listings, in memory, with fault hooks (see the README). Point the
 * client at it with `STORAGE_EMULATOR_HOST=<emulator.url>`.
 *
 *   const emulator = await startStorageEmulator({ buckets: ['b'] });
 *   process.env.STORAGE_EMULATOR_HOST = emulator.url;
 *   ...
 *   await emulator.stop();
 */
export {
  startStorageEmulator,
  type EmulatorObject,
  type StorageEmulator,
  type StorageEmulatorOptions,
} from './emulator';
export type { LoggedRequest, RequestFilter, RequestInfo, RequestOp } from './faults';
export { crc32c, hashesOf, type ObjectHashes } from './hashes';
export { parseArgs, runCli, runCliAsProcess, type CliArgs } from './cli';
