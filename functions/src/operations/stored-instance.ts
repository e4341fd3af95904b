import type { Firestore } from '@google-cloud/firestore';
import { QUERIES } from '../queries';
import type { ExecutionState, JobState } from '../engine/state';
import { asExecution, asJob, refs } from '../engine/store/collections';
import { STORED, type StoredData } from '../engine/store/converters';
import { instanceJobs, instanceTokens, isLegacyInstance } from '../engine/store/instance-doc';

/** An instance document read outside a transaction, with its tokens and jobs whatever its layout. */
export interface StoredInstance {
  /** The document's fields (Timestamps as Dates). */
  readonly data: StoredData;
  readonly tokens: readonly ExecutionState[];
  readonly jobs: readonly JobState[];
  /** Stored before tokens and jobs moved into the instance document (instance-doc.ts); not yet written since. */
  readonly legacy: boolean;
}

/**
 * Reads an instance for the operator's commands and the observers: one read
 * for the current layout; an old-layout instance also queries its token
 * documents and reads the jobs they point at (nothing is written: the next
 * transition of the instance folds them in).
 */
export async function readStoredInstance(db: Firestore, id: string): Promise<StoredInstance | null> {
  const data = (await refs.instance(db, id).withConverter(STORED).get()).data();
  return data === undefined ? null : storedInstanceOf(db, id, data);
}

/** An instance whose document a query already read: no further read for the current layout, the token documents' for the old one. */
export async function storedInstanceOf(db: Firestore, id: string, data: StoredData): Promise<StoredInstance> {
  if (!isLegacyInstance(data)) return { data, tokens: instanceTokens(data), jobs: instanceJobs(data), legacy: false };
  const tokens = (await QUERIES.executionsOfInstance.build(db, id).withConverter(STORED).get()).docs.map((d) =>
    asExecution(d.data()),
  );
  const jobIds = [...new Set(tokens.flatMap((t) => (t.jobId === null ? [] : [t.jobId])))];
  const jobSnaps =
    jobIds.length === 0 ? [] : await db.getAll(...jobIds.map((j) => refs.job(db, j).withConverter(STORED)));
  const jobs = jobSnaps.flatMap((s) => (s.exists ? [asJob(s.data() ?? {})] : []));
  return { data, tokens, jobs, legacy: true };
}
