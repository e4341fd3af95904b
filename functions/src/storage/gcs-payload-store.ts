import type { ClaimsConfig } from '../config';
import type { PayloadStore } from './payload-store';

/**
 * The PayloadStore of `@google-cloud/storage` (loaded on first use). Locally
 * the client itself reads STORAGE_EMULATOR_HOST and talks to
 * packages/storage-emulator. CONTRACT PLACEHOLDER: implemented on the
 * storage branch of issue 17.
 */
export function createGcsPayloadStore(projectId: string, claims: ClaimsConfig): PayloadStore {
  throw new Error(`createGcsPayloadStore(${projectId}, ${claims.payloadBucket}) is not built yet`);
}
