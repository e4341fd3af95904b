import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import { correlationKeyDocId } from '../ids';
import type { ExecutionState, InstanceState, JobState, WaitingPoint } from '../state';

/** Collection names: a public contract, see docs/data-model.md. */
export const COLLECTIONS = {
  instances: 'processInstances',
  executions: 'executions',
  jobs: 'jobs',
  eventSubscriptions: 'eventSubscriptions',
  correlationKeys: 'correlationKeys',
  invoices: 'invoices',
} as const;

/**
 * The per-correlation-key document. It lists the key's waiting points, so the
 * correlation lookup and the double-token guard are one read by id.
 */
export interface CorrelationKeyDoc {
  readonly correlationKey: string;
  readonly waiting: readonly WaitingPoint[];
  readonly updatedAt: Date;
}

export const refs = {
  instance: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.instances).doc(id),
  execution: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.executions).doc(id),
  job: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.jobs).doc(id),
  /** One document per waiting point; a token waits at one point at a time, so it is keyed by execution. */
  eventSubscription: (db: Firestore, executionId: string): DocumentReference => db.collection(COLLECTIONS.eventSubscriptions).doc(executionId),
  correlationKey: (db: Firestore, correlationKey: string): DocumentReference => db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(correlationKey)),
  invoice: (db: Firestore, workOrderId: string): DocumentReference => db.collection(COLLECTIONS.invoices).doc(workOrderId),
};

/** Stored documents are written by this code only; reading them back is a typed view. */
export const asInstance = (data: Record<string, unknown>): InstanceState => data as unknown as InstanceState;
export const asExecution = (data: Record<string, unknown>): ExecutionState => data as unknown as ExecutionState;
export const asJob = (data: Record<string, unknown>): JobState => data as unknown as JobState;
export const asCorrelationKey = (data: Record<string, unknown>): CorrelationKeyDoc => data as unknown as CorrelationKeyDoc;
export const plain = <T extends object>(value: T): Record<string, unknown> => ({ ...value }) as Record<string, unknown>;
