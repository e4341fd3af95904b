import { BasisChangedError } from '../engine/repair-basis';
import { RepairRefusedError } from '../engine/store/repair-request';

/** Why an operator operation refused to change a document: nothing changed, the message says why and what to do. */
export class RefusedError extends Error {
  override readonly name: string = 'RefusedError';
}

/**
 * A refusal of what the request carries rather than of the state it meets
 * (a user task's completion with variables Firestore could not store): the
 * same request is refused whatever the state, so the console answers 400,
 * not 409. Still a refusal: nothing changed, and the CLI exits 1.
 */
export class InvalidRequestError extends RefusedError {
  override readonly name: string = 'InvalidRequestError';
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
