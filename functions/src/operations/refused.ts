import { BasisChangedError } from '../engine/repair-basis';
import { RepairRefusedError } from '../engine/store/repair-request';

/** Why an operator operation refused to change a document: nothing changed, the message says why and what to do. */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

/**
 * Whether `err` is a refusal (an operation's {@link RefusedError}, the
 * engine's RepairRefusedError, or a repair whose preview's basis changed):
 * nothing changed, and its message is the reason in words. Anything else is
 * a failure (Firestore, a bug).
 */
export function isRefusal(err: unknown): err is Error {
  return err instanceof RefusedError || err instanceof RepairRefusedError || err instanceof BasisChangedError;
}
