// placeholder until the operations helpers' branches merge
import { RefusedError } from '../cli/inbox-ops';
import { RepairRefusedError } from '../engine/store/repair-request';

export { RefusedError };

/** Refused, nothing changed. */
export function isRefusal(err: unknown): boolean {
  return err instanceof RefusedError || err instanceof RepairRefusedError;
}
