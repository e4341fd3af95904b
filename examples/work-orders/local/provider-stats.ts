import type { StackStatus } from '../../../tools/local/control';
import type { ProviderStats } from './provider';

/** The simulated provider's counters from a stack's status (its peers, local.ts); throws when the stack runs without them. */
export function providerStats(status: StackStatus): ProviderStats {
  if (status.peers === null) throw new Error('the stack runs no simulated provider: it was started for another app');
  return status.peers as unknown as ProviderStats;
}
