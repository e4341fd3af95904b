import { Firestore } from '@google-cloud/firestore';

/**
 * The Firestore client every function uses. FIRESTORE_EMULATOR_HOST, when set,
 * points it at the emulator (the client reads it itself).
 * ignoreUndefinedProperties: optional fields are simply left out.
 */
export function createFirestore(projectId: string): Firestore {
  return new Firestore({ projectId, ignoreUndefinedProperties: true });
}
