import type { Firestore } from '@google-cloud/firestore';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { instanceJobs, instanceTokens } from '../../functions/src/engine/store/instance-doc';
import type { ExecutionState, JobState, UserTaskState } from '../../functions/src/engine/state';

/** The stored instance document (Timestamps as Dates), or an empty object when there is none. */
async function instanceData(db: Firestore, instanceId: string): Promise<Record<string, unknown>> {
  return (await refs.instance(db, instanceId).withConverter(STORED).get()).data() ?? {};
}

/** The jobs kept in an instance's document (tests read process state as the store writes it: instance-doc.ts). */
export const jobsOf = async (db: Firestore, instanceId: string): Promise<JobState[]> =>
  instanceJobs(await instanceData(db, instanceId));

/** The tokens kept in an instance's document. */
export const tokensOf = async (db: Firestore, instanceId: string): Promise<ExecutionState[]> =>
  instanceTokens(await instanceData(db, instanceId));

/** One job of an instance, or undefined. */
export const jobOf = async (db: Firestore, instanceId: string, jobId: string): Promise<JobState | undefined> =>
  (await jobsOf(db, instanceId)).find((j) => j.id === jobId);

/** One token of an instance, or undefined. */
export const tokenOf = async (
  db: Firestore,
  instanceId: string,
  executionId: string,
): Promise<ExecutionState | undefined> => (await tokensOf(db, instanceId)).find((e) => e.id === executionId);

/**
 * A job by id alone, wherever it is kept: the instance documents are scanned
 * (tests run on a fresh emulator project, so that is a handful of documents).
 */
export async function findJob(db: Firestore, jobId: string): Promise<JobState | undefined> {
  const all = await db.collection(COLLECTIONS.instances).withConverter(STORED).get();
  return all.docs.flatMap((d) => instanceJobs(d.data())).find((j) => j.id === jobId);
}

/** The jobs of an instance as plain records (for toMatchObject), oldest first. */
export const jobRecordsOf = async (db: Firestore, instanceId: string): Promise<Array<Record<string, unknown>>> =>
  (await jobsOf(db, instanceId)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()).map((j) => ({ ...j }));

/** A token by id alone (instance documents scanned, as {@link findJob}). */
export async function findToken(db: Firestore, executionId: string): Promise<ExecutionState | undefined> {
  const all = await db.collection(COLLECTIONS.instances).withConverter(STORED).get();
  return all.docs.flatMap((d) => instanceTokens(d.data())).find((e) => e.id === executionId);
}

/** An instance document's fields but its jobs and what derives from them (a job's own change is not the instance's). */
export async function instanceWithoutJobs(db: Firestore, instanceId: string): Promise<Record<string, unknown>> {
  const data = await instanceData(db, instanceId);
  return Object.fromEntries(
    Object.entries(data).filter(([k]) => !['jobs', 'jobsPendingSince', 'failedJobs'].includes(k)),
  );
}

/** The one OPEN user task of an instance (its createdAt a Date); throws unless there is exactly one. */
export async function openUserTaskOf(db: Firestore, instanceId: string): Promise<UserTaskState> {
  const snap = await db
    .collection(COLLECTIONS.userTasks)
    .where('processInstanceId', '==', instanceId)
    .where('status', '==', 'OPEN')
    .get();
  if (snap.size !== 1) throw new Error(`instance ${instanceId} has ${snap.size} open user tasks, not one`);
  const data = snap.docs[0]?.data() as Record<string, { toDate?: () => Date }>;
  return { ...(data as unknown as UserTaskState), createdAt: data.createdAt?.toDate?.() ?? new Date(0) };
}
