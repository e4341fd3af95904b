import type { SettledQueues } from '../../functions/src/jobs/dispatch';
import type { JobQueue } from '../../functions/src/tasks/job-queue';

/** A queue that takes every task and runs none: for tests about what happens before Cloud Tasks. */
export const NO_QUEUE: JobQueue = { enqueue: async () => 'CREATED' };

/** Both queues of a Settled (jobs, timers) as {@link NO_QUEUE}. */
export const NO_QUEUES: SettledQueues = { jobs: NO_QUEUE, timers: NO_QUEUE };
