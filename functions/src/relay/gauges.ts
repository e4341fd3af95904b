import type { Firestore, QueryDocumentSnapshot, QuerySnapshot, Timestamp } from '@google-cloud/firestore';
import type { Engine } from '../engine/engine';
import { STATE_SHARDS } from '../engine/store/collections';
import { countFailedJobs } from '../jobs/failed-jobs';
import { type PageCursor, QUERIES } from '../queries';

/**
 * The relay's gauges, logged with every summary: log-based metrics read them,
 * and the parked and incidents alert policies alert on their levels
 * (something is there now), not only on the log entry of the moment it
 * appeared, so an alert stays open until the operator has dealt with every
 * parked document and incident.
 */
export interface Gauges {
  readonly open: number;
  readonly parked: number;
  /** Process instances in INCIDENT (duplicate waiting point, failed job, …), however they got there (`repair move-token --force` logs only on the operator's terminal). */
  readonly openIncidents: number;
  /**
   * Jobs FAILED after their last attempt. They stay FAILED as a record after
   * a repair, so no alert is on this level: the instance's incident (above)
   * carries the lasting state until `inbox repair resolve-incident`.
   */
  readonly failedJobs: number;
  /** Age of the oldest OPEN document in seconds; null when none is open. */
  readonly oldestOpenAgeSeconds: number | null;
}

/**
 * Counts from count() aggregations (no document reads), and the oldest OPEN
 * document from one ordered limit-1 query per shard (the receivedAt index
 * leads with the shard for the same reason as the candidate index). The
 * requirement says one ordered query; one per shard is the deliberate
 * deviation sharding forces (an unsharded receivedAt index would cap inbox
 * writes at about 500/s), see docs/data-model.md, "Indexes".
 */
export async function readGauges(db: Firestore, shards: number, now: Date): Promise<Gauges> {
  const [open, parked, incidents, failed, ...oldest] = await Promise.all([
    QUERIES.byStatus.build(db, 'OPEN').count().get(),
    QUERIES.byStatus.build(db, 'PARKED').count().get(),
    QUERIES.instancesByStatus.build(db, 'INCIDENT').count().get(),
    countFailedJobs(db),
    ...Array.from({ length: shards }, (_, shard) => QUERIES.oldestOpen.build(db, shard).get()),
  ]);
  const times = oldest.flatMap((q) => q.docs.map((d) => (d.get('receivedAt') as Timestamp).toMillis()));
  return {
    open: open.data().count,
    parked: parked.data().count,
    openIncidents: incidents.data().count,
    failedJobs: failed,
    oldestOpenAgeSeconds:
      times.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...times)) / 1000)),
  };
}

/**
 * Per message name the deployed models wait for: how long its tokens have
 * waited. Logged as one `waiting gauge` line per name with every scheduled
 * summary, so a log-based metric can carry the name as a label and the
 * alert policy (waiting-too-long.json) opens one incident per name.
 */
export interface WaitingGauge {
  readonly messageName: string;
  /** Age of the oldest waiting point for this message in seconds; null when no token waits for it. */
  readonly oldestWaitingAgeSeconds: number | null;
  /**
   * Correlation keys that wait for this message and hold a waiting point
   * created at least INBOX_WAITING_ALERT_DAYS ago (a count() over key
   * documents, which carry the oldest point's time, not one per point). The
   * same as the points in the usual case, one point per key: a key whose
   * old point is for another message also counts here (only while this
   * message's own oldest point in its shard is over the threshold too), and
   * two tokens of one key waiting for this message (already an incident,
   * DUPLICATE_WAITING_POINT) count once.
   */
  readonly waitingOverThreshold: number;
  /** INBOX_WAITING_ALERT_DAYS, so the line says what "over" means. */
  readonly thresholdDays: number;
}

/**
 * The message names the deployed models wait for (receive tasks and message
 * catch events, event-gateway branches included), sorted. Message start
 * events are no waiting points: a start message finds no token to wait.
 */
export function waitedMessageNames(engine: Engine): string[] {
  const names = new Set<string>();
  for (const key of engine.processKeys) {
    for (const node of Object.values(engine.model(key).nodes)) {
      if (node.kind === 'receiveTask' || node.kind === 'messageCatchEvent') names.add(node.messageName);
    }
  }
  return [...names].sort();
}

/**
 * The gauge line of OPEN user tasks, beside one per message name: a person
 * who never acts is a silent wait too. Its `messageName` label is this
 * text, which no BPMN message name can clash with in practice.
 */
export const USER_TASKS_GAUGE = '(user tasks)';

/** Whether any deployed model has a user task (then its gauge is read and logged). */
export function hasUserTasks(engine: Engine): boolean {
  return engine.processKeys.some((key) => Object.values(engine.model(key).nodes).some((n) => n.kind === 'userTask'));
}

/**
 * Every waiting gauge of the deployed models: one per message name they
 * wait for, and one for OPEN user tasks when a model has any.
 */
export async function readAllWaitingGauges(
  db: Firestore,
  engine: Engine,
  thresholdDays: number,
  now: Date,
): Promise<WaitingGauge[]> {
  const [messages, tasks] = await Promise.all([
    readWaitingGauges(db, waitedMessageNames(engine), thresholdDays, now),
    hasUserTasks(engine) ? readUserTaskGauge(db, thresholdDays, now).then((g) => [g]) : Promise.resolve([]),
  ]);
  return [...messages, ...tasks];
}

/**
 * OPEN user tasks: the oldest one's age (one limit-1 query on status and
 * createdAt) and, when it is over the threshold, how many are (a count()
 * aggregation). People open tasks far below the rate that would need shards.
 */
export async function readUserTaskGauge(db: Firestore, thresholdDays: number, now: Date): Promise<WaitingGauge> {
  const cutoff = new Date(now.getTime() - thresholdDays * DAY_MS);
  const oldest = (await QUERIES.userTasks.build(db, { status: 'OPEN' }, null, 1).get()).docs[0];
  const createdAt: unknown = oldest?.get('createdAt');
  const at =
    typeof (createdAt as Timestamp | undefined)?.toMillis === 'function' ? (createdAt as Timestamp).toMillis() : null;
  const over =
    at !== null && at <= cutoff.getTime()
      ? (await QUERIES.openUserTasksBefore.build(db, cutoff).count().get()).data().count
      : 0;
  return {
    messageName: USER_TASKS_GAUGE,
    oldestWaitingAgeSeconds: at === null ? null : Math.max(0, Math.round((now.getTime() - at) / 1000)),
    waitingOverThreshold: over,
    thresholdDays,
  };
}

const DAY_MS = 86_400_000;
/** Key documents read per query after the first when a shard's oldest key holds an older point for another message. */
const REFINE_PAGE = 10;

/**
 * The waiting gauges, cheaply, from the key documents (the only place a
 * waiting point is stored): per (message name, shard) one limit-1 query for
 * the key that waits for the name and holds the oldest point (at most one
 * document read, one billed when it finds none). That key's point for the
 * name is the oldest one of the shard unless the key's oldest point is for
 * another message; then the keys after it are read, REFINE_PAGE at a time,
 * until none can hold an older one. Then a count() aggregation (one read per
 * 1,000 matches, at least one) only in the shards whose oldest point for the
 * name is over the threshold; a shard whose oldest is younger has none over
 * it. With nothing over the threshold that is usually 16 queries and 16
 * reads per name.
 */
export async function readWaitingGauges(
  db: Firestore,
  messageNames: readonly string[],
  thresholdDays: number,
  now: Date,
): Promise<WaitingGauge[]> {
  const cutoff = new Date(now.getTime() - thresholdDays * DAY_MS);
  return Promise.all(
    messageNames.map(async (messageName): Promise<WaitingGauge> => {
      const shards = Array.from({ length: STATE_SHARDS }, (_, shard) => shard);
      const oldest = await Promise.all(
        shards.map(async (shard) => ({ shard, createdAt: await oldestInShard(db, shard, messageName) })),
      );
      const present = oldest.flatMap((o) => (o.createdAt === null ? [] : [o.createdAt]));
      const old = oldest.filter((o) => o.createdAt !== null && o.createdAt <= cutoff.getTime());
      const counts = await Promise.all(
        old.map(
          async (o) => (await QUERIES.waitingSince.build(db, o.shard, messageName, cutoff).count().get()).data().count,
        ),
      );
      return {
        messageName,
        oldestWaitingAgeSeconds:
          present.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...present)) / 1000)),
        waitingOverThreshold: counts.reduce((a, b) => a + b, 0),
        thresholdDays,
      };
    }),
  );
}

/** The createdAt (ms) of the oldest point for a message in one shard, null when no key there waits for it. */
async function oldestInShard(db: Firestore, shard: number, messageName: string): Promise<number | null> {
  let best: number | null = null;
  let after: PageCursor | null = null;
  for (let limit = 1; ; limit = REFINE_PAGE) {
    const page: QuerySnapshot = await QUERIES.oldestWaiting.build(db, shard, messageName, after, limit).get();
    for (const key of page.docs) {
      const since = timeOf(key.get('waitingSince'), key);
      // Keys come in waitingSince order: from here on none holds a point older than the best one.
      if (best !== null && since >= best) return best;
      const own = ownOldest(key, messageName);
      best = Math.min(best ?? Number.POSITIVE_INFINITY, own ?? since);
    }
    const last: QueryDocumentSnapshot | undefined = page.docs[page.docs.length - 1];
    if (page.size < limit || last === undefined) return best;
    after = { at: last.get('waitingSince') as Timestamp, id: last.id };
  }
}

/** The oldest createdAt of a key's points for one message; null if it lists none (waitingFor edited by hand). */
function ownOldest(key: QueryDocumentSnapshot, messageName: string): number | null {
  const waiting: unknown = key.get('waiting');
  const points = Array.isArray(waiting) ? (waiting as unknown[]) : [];
  const times = points.flatMap((p) =>
    typeof p === 'object' &&
    p !== null &&
    (p as { messageName?: unknown }).messageName === messageName &&
    (p as { standby?: unknown }).standby !== true
      ? [timeOf((p as { createdAt?: unknown }).createdAt, key)]
      : [],
  );
  return times.length === 0 ? null : Math.min(...times);
}

/** A stored time in ms. Throws on anything else (a document edited by hand): the gauges are then not read, and say why. */
function timeOf(value: unknown, key: QueryDocumentSnapshot): number {
  if (typeof value === 'object' && value !== null && 'toMillis' in value && typeof value.toMillis === 'function')
    return (value as Timestamp).toMillis();
  throw new TypeError(
    `correlationKeys/${key.id} holds a waiting time that is not a timestamp (${JSON.stringify(value)})`,
  );
}
