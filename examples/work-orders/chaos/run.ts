/**
 * Drives one chaos run: a local stack of its own (fresh emulators, four
 * relays, the chaos model), the plan's starts and publishes with flow
 * control, the races (each last tranche published around its timer's due
 * time), the faults and the operator's repairs at their steps, then
 * settling, the operator's one requeue of dead letters, and the evaluation.
 */
import { Firestore, Timestamp } from '@google-cloud/firestore';
import { PubSub, type Topic } from '@google-cloud/pubsub';
import { join } from 'node:path';
import { runCli } from '../../../functions/src/cli/main';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { instanceId } from '../../../functions/src/engine/ids';
import { INBOX } from '../../../functions/src/inbox/document';
import { invalidDocId } from '../../../functions/src/inbox/ids';
import { startLocalStack, type LocalStack } from '../../../tools/local/stack';
import { chaosLine, chaosPassed, evaluateChaos, type ChaosCounts } from './evaluate';
import { cancelledOrders, openWork, readChaosSnapshot } from './observe';
import { emptyTally, operate, type OperatorCli, type OperatorTally } from './operator';
import {
  COMPLETION_ATTRIBUTES,
  planChaos,
  RACE,
  RELAYS,
  TRANCHES,
  type ChaosPlan,
  type ChaosSizes,
  type PlannedFault,
  type PlannedRace,
} from './plan';
import { completionSubscription, TOPICS, WORK_ORDERS_APP } from '../local/names';

export interface ChaosOptions extends ChaosSizes {
  /** Documents published but not yet stored before publishing pauses (keeps the 2-core machine out of overload). */
  readonly maxBacklog: number;
  /** How long Firestore stays down at each restart, ms (plus the restart itself). */
  readonly downMs: number;
  /** Give up settling after this long, ms. */
  readonly settleTimeoutMs: number;
  readonly progress: (line: string) => void;
}

export interface ChaosResult {
  readonly line: string;
  readonly ok: boolean;
  readonly counts: ChaosCounts;
  readonly faults: ReadonlyArray<PlannedFault & { readonly note: string }>;
  /** Each race as run: when its last tranche was published, relative to its timer's due time (ms; null: never published). */
  readonly races: ReadonlyArray<{
    readonly workOrderId: string;
    readonly plannedOffsetMs: number;
    readonly publishedOffsetMs: number | null;
  }>;
  /** What the operator's repairs came to. */
  readonly operator: OperatorTally;
  readonly seconds: number;
}

/** The races under way: started once an order's other tranches are out, each publishing its last tranche around its timer's due time. */
interface Races {
  /** Timers seen whose tranche is not published yet: the run is not settled while any is. */
  inFlight(): number;
  /** Stops the races still waiting for their timer (after settling: their order never reached the last wait) and returns what ran. */
  finish(): Promise<ChaosResult['races']>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const plan = planChaos(options);
  const projectId = `chaos-${options.seed}-${Date.now().toString(36)}`;
  options.progress(
    `seed ${options.seed}: ${plan.orders.length} work orders, ${plan.messages.length} messages, ${plan.faults.length} faults; project ${projectId}`,
  );
  const stack = await startLocalStack({
    projectId,
    relays: RELAYS,
    reuseEmulators: false,
    app: WORK_ORDERS_APP,
    env: { INBOX_BPMN_DIR: CHAOS_BPMN_DIR },
    progress: options.progress,
  });
  const info = await stack.info();
  // Straight to the emulator (not through the functions' gate): the run reads its results even while an outage is staged.
  const db = new Firestore({
    projectId,
    host: info.firestoreHost,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  });
  const pubsub = new PubSub({ projectId, apiEndpoint: info.pubsubHost });
  const tally = emptyTally();
  try {
    const { poisonIds, faults, races } = await drive(plan, stack, { db, projectId }, pubsub, options, tally);
    let raced: ChaosResult['races'] = [];
    try {
      await settleAndRepair(stack, db, projectId, options, plan, races);
    } finally {
      raced = await races.finish();
    }
    const counts = evaluateChaos(plan, poisonIds, await readChaosSnapshot(db));
    const seconds = Math.round((Date.now() - started) / 1000);
    return {
      line: chaosLine(options.seed, counts, seconds, tally),
      ok: chaosPassed(counts),
      counts,
      faults,
      races: raced,
      operator: tally,
      seconds,
    };
  } finally {
    await pubsub.close();
    await db.terminate();
    await stack.stop();
  }
}

/** Takes the plan's steps in order (16 at a time), holding back while the receiver is behind, and fires each fault at its step. */
/** The CLI in process on the run's project, with the chaos model deployed (what an operator's terminal runs). */
function operatorCli(projectId: string, firestoreHost: string): OperatorCli {
  return async (argv) => {
    let out = '';
    let err = '';
    const env = {
      ...process.env,
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      INBOX_APP: WORK_ORDERS_APP,
      INBOX_BPMN_DIR: CHAOS_BPMN_DIR,
      INBOX_OPERATOR: 'chaos operator',
    };
    const code = await runCli(
      [...argv],
      { out: (t) => (out += t), err: (t) => (err += t), confirm: async () => true },
      env,
    );
    return { code, out, err };
  };
}

/** The chaos model: the example's process, completed in four tranches, with a racing deadline at the last wait. */
const CHAOS_BPMN_DIR = join(__dirname, 'bpmn');

async function drive(
  plan: ChaosPlan,
  stack: LocalStack,
  { db, projectId }: { db: Firestore; projectId: string },
  pubsub: PubSub,
  options: ChaosOptions,
  tally: OperatorTally,
): Promise<{ poisonIds: string[]; faults: Array<PlannedFault & { note: string }>; races: Races }> {
  const info = await stack.info();
  const topic = pubsub.topic(TOPICS.completions);
  const poisonIds: string[] = [];
  const poisonSlot = new Map<number, number>();
  for (const [i, m] of plan.messages.entries()) if (m.kind === 'poison') poisonSlot.set(i, poisonSlot.size);
  // Documents the publishes so far will make (a duplicate makes none), against documents stored.
  let willExist = 0;
  let stored = 0;
  let counting = true;
  const counter = (async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set false after the run; TypeScript reads an IIFE as inline code, so it sees only `true`
    while (counting) {
      stored = await db
        .collection(INBOX)
        .count()
        .get()
        .then(
          (s) => s.data().count,
          () => stored,
        );
      await sleep(500);
    }
  })();

  const fired: Array<PlannedFault & { note: string }> = [];
  let faultChain: Promise<void> = Promise.resolve();
  let nextFault = 0;
  const fire = (fault: PlannedFault): void => {
    faultChain = faultChain.then(async () => {
      options.progress(
        `fault at step ${fault.atStep}: ${fault.kind}${fault.kind === 'relay-kill' ? ` of relay ${fault.target}` : ''}`,
      );
      fired.push({ ...fault, note: await strike(stack, fault, options.downMs) });
    });
  };

  // The operator works beside the faults, one repair after the other, as one person would; racing orders are left alone.
  const operator = {
    db,
    cli: operatorCli(projectId, info.firestoreHost),
    leaveAlone: new Set(plan.races.map((r) => instanceId('work-order-execution', r.workOrderId))),
    tally,
    progress: options.progress,
  };
  let repairChain: Promise<void> = Promise.resolve();
  let nextRepair = 0;
  const repair = (): void => {
    const planned = plan.repairs[nextRepair++];
    if (planned !== undefined) repairChain = repairChain.then(() => operate(operator, planned));
  };

  const races = startRaces(plan, db, topic, options, () => (willExist += 1));
  const raceDeadlines = new Map(plan.races.map((r) => [r.workOrderId, r.deadline]));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plan.steps.length) {
      const index = next++;
      while (nextFault < plan.faults.length && (plan.faults[nextFault]?.atStep ?? Infinity) <= index)
        fire(plan.faults[nextFault++] as PlannedFault);
      while (nextRepair < plan.repairs.length && (plan.repairs[nextRepair]?.atStep ?? Infinity) <= index) repair();
      const step = plan.steps[index];
      if (step === undefined) break;
      if (step.kind === 'start') {
        await startOrder(info.functions.startProcess, step.workOrderId, raceDeadlines.get(step.workOrderId) ?? null);
        continue;
      }
      while (willExist - stored > options.maxBacklog) await sleep(100);
      const message = plan.messages[step.message];
      if (message === undefined) throw new Error(`step ${index}: no message ${step.message}`);
      const attributes = message.kind === 'poison' ? message.attributes : COMPLETION_ATTRIBUTES;
      if (message.kind !== 'duplicate') willExist += 1;
      const messageId = await topic.publishMessage({ data: message.data, attributes: { ...attributes } });
      if (message.kind === 'completion') races.published(message.workOrderId);
      const slot = poisonSlot.get(step.message);
      if (slot !== undefined) poisonIds[slot] = invalidDocId(completionSubscription(info.projectId), messageId);
      if (index % 500 === 0) options.progress(`step ${index}/${plan.steps.length}: ${stored} documents stored`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
    while (nextFault < plan.faults.length) fire(plan.faults[nextFault++] as PlannedFault);
    while (nextRepair < plan.repairs.length) repair();
    await faultChain;
    await repairChain;
  } finally {
    counting = false;
    await counter;
  }
  return { poisonIds, faults: fired, races };
}

/**
 * The races: once the other tranches of a racing order are published, waits
 * for its timer (the token then waits at the last wait), then publishes the
 * racing tranche `offsetMs` after the timer's due time: whichever of the
 * relay and the timer's task gets there first wins, the other must find
 * nothing to do.
 */
function startRaces(
  plan: ChaosPlan,
  db: Firestore,
  topic: Topic,
  options: ChaosOptions,
  onPublish: () => void,
): Races & { published(workOrderId: string): void } {
  const byOrder = new Map(plan.races.map((r) => [r.workOrderId, r]));
  const published = new Map<string, number>();
  const running: Array<Promise<ChaosResult['races'][number]>> = [];
  let inFlight = 0;
  let stopped = false;
  const run = async (race: PlannedRace): Promise<ChaosResult['races'][number]> => {
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

async function strike(stack: LocalStack, fault: PlannedFault, downMs: number): Promise<string> {
  switch (fault.kind) {
    case 'relay-kill': {
      const { busy } = await stack.killRelay(fault.target);
      return busy ? 'killed mid-batch' : 'killed (no batch under way)';
    }
    case 'firestore-restart': {
      const report = await stack.firestoreOutage(downMs);
      return `${report.kind} in ${report.totalMs} ms`;
    }
    case 'dispatch-faults':
      // Task attempts answered 503 (Cloud Tasks retries them), and CreateTask calls that fail (jobs wait for sweepJobs).
      stack.failDispatches(40, 503);
      stack.failDispatches(10, 'connection-refused');
      stack.failNextCreateTask(10);
      return '50 dispatch attempts and 10 CreateTask calls failed';
  }
}

/** startProcess until it answers 2xx (idempotent per work order); 5xx and refused connections are retried. */
async function startOrder(url: string, workOrderId: string, raceDeadline: string | null): Promise<void> {
  // providerScript "silent": the simulated provider leaves the completions to the chaos run. No raceDeadline: the model's 14 days.
  const variables = {
    workOrderId,
    providerScript: 'silent',
    ...(raceDeadline === null ? {} : { [RACE.variable]: raceDeadline }),
  };
  const body = JSON.stringify({ processKey: 'work-order-execution', businessKey: workOrderId, variables });
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      if (response.ok) return;
      if (response.status < 500)
        throw new Error(`startProcess ${workOrderId}: ${response.status} ${await response.text()}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('startProcess')) throw err;
    }
    if (attempt >= 240) throw new Error(`startProcess ${workOrderId}: no 2xx after ${attempt} attempts`);
    await sleep(250);
  }
}

/**
 * Waits until nothing is OPEN or PENDING (twice in a row), then does what an
 * operator would: one `inbox requeue --reason DEAD_LETTERED --yes`. Repeats
 * while that finds something to requeue (a dead letter may land late).
 */
async function settleAndRepair(
  stack: LocalStack,
  db: Firestore,
  projectId: string,
  options: ChaosOptions,
  plan: ChaosPlan,
  races: Races,
): Promise<void> {
  const deadline = Date.now() + options.settleTimeoutMs;
  const raceTranches = plan.races.flatMap((r) => {
    const m = plan.messages[r.message];
    return m?.kind === 'completion' ? [m.docId] : [];
  });
  // Completions nobody will wait for: racing tranches (their timer may win), and those of orders an operator cancelled (read back from the records).
  const waitForNobody = async (): Promise<Set<string>> => {
    const cancelled = await cancelledOrders(db);
    const ofCancelled = plan.messages.flatMap((m) =>
      m.kind === 'completion' && cancelled.has(m.workOrderId) ? [m.docId] : [],
    );
    return new Set([...raceTranches, ...ofCancelled]);
  };
  const settle = async (): Promise<void> => {
    let quiet = 0;
    while (quiet < 2) {
      if (Date.now() > deadline) throw new Error(`not settled after ${options.settleTimeoutMs} ms`);
      await sleep(2_000);
      // A read that fails (Firestore restarting) is retried; say so, or a read that always fails would look like a run that never settles.
      const work = await waitForNobody()
        .then((nobody) => openWork(db, nobody))
        .catch((err: unknown) => {
          options.progress(
            `settling: could not read the open work (${err instanceof Error ? err.message : String(err)})`,
          );
          return null;
        });
      quiet =
        work !== null && work.open === 0 && work.pendingJobs === 0 && work.pendingTimers === 0 && races.inFlight() === 0
          ? quiet + 1
          : 0;
      if (work !== null)
        options.progress(
          `settling: ${work.open} OPEN, ${work.pendingJobs} jobs PENDING, ${work.pendingTimers} timers PENDING, ${races.inFlight()} races publishing, ${work.documents} documents`,
        );
    }
  };
  const info = await stack.info();
  for (let round = 1; round <= 3; round++) {
    await settle();
    let out = '';
    const argv = ['--json', 'requeue', '--reason', 'DEAD_LETTERED', '--yes'];
    await runCli(
      argv,
      { out: (t) => (out += t), err: () => undefined, confirm: async () => true },
      { ...process.env, GOOGLE_CLOUD_PROJECT: projectId, FIRESTORE_EMULATOR_HOST: info.firestoreHost },
    );
    const requeued = (JSON.parse(out === '' ? '{}' : out) as { requeued?: number }).requeued ?? 0;
    options.progress(`npm run inbox -- requeue --reason DEAD_LETTERED --yes: ${requeued} requeued`);
    if (requeued === 0) return;
  }
  await settle();
}
