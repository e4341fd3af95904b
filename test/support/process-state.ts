import type { Firestore } from '@google-cloud/firestore';
import { refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { instanceJobs, instanceTokens } from '../../functions/src/engine/store/instance-doc';
import type { ExecutionState, JobState } from '../../functions/src/engine/state';

/** The stored instance document (Timestamps as Dates), or an empty object when there is none. */
async function instanceData(db: Firestore, instanceId: string): Promise<Record<string, unknown>> {
  return (await refs.instance(db, instanceId).withConverter(STORED).get()).data() ?? {};
}

/** The jobs kept in an instance's document (tests read process state as the store writes it: instance-doc.ts). */
export const jobsOf = async (db: Firestore, instanceId: string): Promise<JobState[]> => instanceJobs(await instanceData(db, instanceId));

/** The tokens kept in an instance's document. */
export const tokensOf = async (db: Firestore, instanceId: string): Promise<ExecutionState[]> => instanceTokens(await instanceData(db, instanceId));

/** One job of an instance, or undefined. */
export const jobOf = async (db: Firestore, instanceId: string, jobId: string): Promise<JobState | undefined> => (await jobsOf(db, instanceId)).find((j) => j.id === jobId);

/** One token of an instance, or undefined. */
export const tokenOf = async (db: Firestore, instanceId: string, executionId: string): Promise<ExecutionState | undefined> => (await tokensOf(db, instanceId)).find((e) => e.id === executionId);
