import type { Firestore } from '@google-cloud/firestore';
import type { AppContext, InstanceState, JobState, StepContext } from '../../../../functions/src/app';
import app from '../../index';

/** A stored document of the fake: its fields as written. */
export type StoredFields = Readonly<Record<string, unknown>>;

/** One publish a handler made. */
export interface Published {
  readonly topic: string;
  readonly data: unknown;
  readonly attributes: Readonly<Record<string, string>>;
}

/** ALREADY_EXISTS, gRPC code 6: what Firestore's create() throws when the document exists. */
const alreadyExists = (path: string): Error =>
  Object.assign(new Error(`6 ALREADY_EXISTS: Document already exists: ${path}`), { code: 6 });

/**
 * An AppContext in memory, for the handlers' unit tests: a Firestore of
 * just what the handlers use (collection, doc, create, get), a publish that
 * records and refuses a topic the app does not declare (as the deployment's
 * does), and no claim check.
 */
export interface FakeContext {
  readonly ctx: AppContext;
  /** Documents by `collection/id`. */
  readonly docs: Map<string, StoredFields>;
  readonly published: Published[];
  /** Makes the next create() fail with `err` (an outage), writing nothing. */
  failNextCreate(err: Error): void;
}

export function fakeContext(): FakeContext {
  const docs = new Map<string, StoredFields>();
  const published: Published[] = [];
  let nextFailure: Error | null = null;
  const doc = (collection: string, id: string): object => {
    const path = `${collection}/${id}`;
    return {
      id,
      path,
      create: async (fields: StoredFields) => {
        const failure = nextFailure;
        nextFailure = null;
        if (failure !== null) throw failure;
        if (docs.has(path)) throw alreadyExists(path);
        docs.set(path, { ...fields });
      },
      get: async () => {
        const fields = docs.get(path);
        return {
          id,
          exists: fields !== undefined,
          get: (field: string): unknown => fields?.[field],
          data: () => fields,
        };
      },
    };
  };
  // Only the calls the handlers make; the type is the real client's so the handlers compile unchanged.
  const db = { collection: (name: string) => ({ doc: (id: string) => doc(name, id) }) } as unknown as Firestore;
  const ctx: AppContext = {
    db: () => db,
    publish: async (topic, data, attributes = {}) => {
      if (!app.publishes.includes(topic)) throw new Error(`${topic} is not in the app's publishes`);
      published.push({ topic, data: JSON.parse(data.toString('utf8')) as unknown, attributes: { ...attributes } });
      return `message-${published.length}`;
    },
    readClaim: async () => {
      throw new Error('the claims example reads no claim check');
    },
  };
  return {
    ctx,
    docs,
    published,
    failNextCreate: (err) => {
      nextFailure = err;
    },
  };
}

/** The argument of a handler: a job of `activityId` for the instance of claim `claimId` with `variables`. */
export function stepContext(
  activityId: string,
  claimId: string,
  variables: Readonly<Record<string, unknown>>,
  jobId = `job-${activityId}-1`,
): StepContext {
  const at = new Date('2026-12-01T10:00:00Z');
  const job: JobState = {
    id: jobId,
    processInstanceId: `instance-${claimId}`,
    executionId: 'e-1',
    activityId,
    status: 'PENDING',
    attempts: 0,
    lastError: null,
    createdAt: at,
    finishedAt: null,
  };
  const instance: InstanceState = {
    id: `instance-${claimId}`,
    processKey: 'claim-handling',
    processVersion: 'v1',
    businessKey: claimId,
    status: 'RUNNING',
    variables: { claimId, ...variables },
    activeExecutionIds: ['e-1'],
    incidents: [],
    createdAt: at,
    updatedAt: at,
    completedAt: null,
  };
  return { job, instance, now: at };
}
