import type * as FirestoreModule from '@google-cloud/firestore';
import type { Firestore } from '@google-cloud/firestore';
import { QUERIES } from '../queries';

/**
 * How many jobs are FAILED: the sum of `failedJobs` over the instance
 * documents that hold one (instance-doc.ts), plus the FAILED job documents of
 * the layout before 0.6.0. Two aggregation queries, whatever the
 * number of instances. The relay's FAILED-jobs gauge (relay/gauges.ts).
 */
export async function countFailedJobs(db: Firestore): Promise<number> {
  // Required here, not at module load: the functions load the Firestore client with their first request.
  const { AggregateField } = require('@google-cloud/firestore') as typeof FirestoreModule;
  const [inInstances, legacy] = await Promise.all([
    QUERIES.instancesWithFailedJobs
      .build(db)
      .aggregate({ failed: AggregateField.sum('failedJobs') })
      .get(),
    QUERIES.jobsByStatus.build(db, 'FAILED').count().get(),
  ]);
  return Number(inInstances.data().failed) + legacy.data().count;
}
