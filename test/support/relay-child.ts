/**
 * A relay in a process of its own, for the crash test: relays the inbox of
 * RELAY_PROJECT on the emulator until nothing is open, printing one line per
 * round, so the test can SIGKILL it in the middle of its work.
 */
import { createFirestore } from '../../functions/src/firestore';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { fixtureEngine } from './engine';
import { NO_QUEUES } from './queues';

async function main(): Promise<void> {
  const db = createFirestore(process.env.RELAY_PROJECT ?? '');
  const engine = await fixtureEngine();
  const deps = {
    db,
    engine,
    policy: { backoffBaseMs: 100, backoffCapMs: 1_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
    retentionMs: 3_600_000,
    transactionTimeoutMs: 30_000,
    now: () => new Date(),
    random: Math.random,
  };
  for (;;) {
    // Small rounds: the test wants to kill it while work is in flight.
    const summary = await relayBatch(
      deps,
      NO_QUEUES,
      createLogger(() => undefined),
      { budgetMs: 60_000, parallelism: 4, batchSize: 16, shards: 16 },
    );
    process.stdout.write(`${JSON.stringify({ correlated: summary.correlated })}\n`);
    if (summary.candidates === 0) break;
  }
}

void main();
