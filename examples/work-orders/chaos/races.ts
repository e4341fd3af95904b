/**
 * The chaos run's races: a racing order's last tranche published around its
 * timer's due time, so the relay and the timer's Cloud Task race for the
 * token at the last wait.
 */
import { Timestamp, type Firestore } from '@google-cloud/firestore';
import type { Topic } from '@google-cloud/pubsub';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { instanceId } from '../../../functions/src/engine/ids';
import { RACE, TRANCHES, type ChaosPlan, type PlannedRace } from './plan';
import { COMPLETION_ATTRIBUTES } from './plan-messages';
import { sleep, type ChaosOptions, type RaceRun } from './run-types';

/** The races under way: started once an order's other tranches are out, each publishing its last tranche around its timer's due time. */
export interface Races {
  /** Timers seen whose tranche is not published yet: the run is not settled while any is. */
  inFlight(): number;
  /** Stops the races still waiting for their timer (after settling: their order never reached the last wait) and returns what ran. */
  finish(): Promise<readonly RaceRun[]>;
}

/**
 * The races: once the other tranches of a racing order are published, waits
 * for its timer (the token then waits at the last wait), then publishes the
 * racing tranche `offsetMs` after the timer's due time: whichever of the
 * relay and the timer's task gets there first wins, the other must find
 * nothing to do.
 */
export function startRaces(
  plan: ChaosPlan,
  db: Firestore,
  topic: Topic,
  options: Pick<ChaosOptions, 'progress'>,
  onPublish: () => void,
): Races & { published(workOrderId: string): void } {
  const byOrder = new Map(plan.races.map((r) => [r.workOrderId, r]));
  const published = new Map<string, number>();
  const running: Array<Promise<RaceRun>> = [];
  let inFlight = 0;
  let stopped = false;
  const run = async (race: PlannedRace): Promise<RaceRun> => {
    const id = instanceId('work-order-execution', race.workOrderId);
    const none = { workOrderId: race.workOrderId, plannedOffsetMs: race.offsetMs, publishedOffsetMs: null };
    let dueAt: Date | null = null;
    while (dueAt === null) {
      if (stopped) return none;
      const timers = await db
        .collection(COLLECTIONS.timers)
        .where('processInstanceId', '==', id)
        .where('activityId', '==', RACE.boundaryEventId)
        .get()
        .catch(() => null);
      const due: unknown = timers?.docs[0]?.get('dueAt');
      if (due instanceof Timestamp) dueAt = due.toDate();
      else await sleep(250);
    }
    inFlight += 1;
    try {
      await sleep(Math.max(0, dueAt.getTime() + race.offsetMs - Date.now()));
      const message = plan.messages[race.message];
      if (message === undefined) throw new Error(`race of ${race.workOrderId}: no message ${race.message}`);
      const at = Date.now();
      onPublish();
      await publishUntilAccepted(topic, message.data);
      options.progress(
        `race ${race.workOrderId}: last tranche published ${at - dueAt.getTime()} ms from its timer's due time (planned ${race.offsetMs})`,
      );
      return { ...none, publishedOffsetMs: at - dueAt.getTime() };
    } finally {
      inFlight -= 1;
    }
  };
  return {
    published(workOrderId) {
      const n = (published.get(workOrderId) ?? 0) + 1;
      published.set(workOrderId, n);
      const race = byOrder.get(workOrderId);
      if (race !== undefined && n === TRANCHES - 1) running.push(run(race));
    },
    inFlight: () => inFlight,
    async finish() {
      stopped = true;
      return Promise.all(running);
    },
  };
}

/** Publishes to the emulator, retrying a failed call (the client's own retries gave up): the race's message must go out. */
async function publishUntilAccepted(topic: Topic, data: Buffer): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await topic.publishMessage({ data, attributes: { ...COMPLETION_ATTRIBUTES } });
      return;
    } catch (err) {
      if (attempt >= 10) throw err;
      await sleep(500);
    }
  }
}
