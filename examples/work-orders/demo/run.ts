/**
 * Drives one demo run against a local stack, phase by phase, then reads the
 * state back and evaluates it. Everything goes through the deployed paths:
 * work orders start over HTTP (startProcess), completions arrive over
 * Pub/Sub push, repairs are the operator CLI's commands.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { runCli } from '../../../functions/src/cli/main';
import { refs } from '../../../functions/src/engine/store/collections';
import { INBOX } from '../../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../../functions/src/inbox/ids';
import type { StackControl, StackInfo, StackStatus } from '../../../tools/local/control';
import { COMPLETION_ATTRIBUTES, completionOf } from '../local/provider';
import { evaluate, observeOrder, showsOf, type Evaluation, type Snapshot } from './evaluate';
import type { ObjectView } from './large-reports';
import { readSnapshot } from './observe';
import { readClaimObjects, readPayloadObjects } from './observe-storage';
import { type PlannedOrder, planOrders, POISON_MESSAGES, scenarioOf, type ScenarioId } from './plan';
import { errorMessage } from '../../../functions/src/core/errors';
import { completionSubscription, TOPICS } from '../local/names';
import { providerStats } from '../local/provider-stats';

export interface DemoOptions {
  readonly orders: number;
  /** How long Firestore stays down in the outage scenario, ms. */
  readonly outageMs: number;
  /** Give up waiting for a phase after this long, ms. */
  readonly phaseTimeoutMs: number;
  /** Progress: done so far of the total, and what is happening. */
  readonly progress: (done: number, total: number, phase: string) => void;
}

export interface DemoResult {
  readonly run: string;
  readonly orders: number;
  readonly messagesPublished: number;
  readonly evaluation: Evaluation;
  /** The operator commands the run used, as a person would type them. */
  readonly commands: readonly string[];
  /** What `inbox waiting` listed of the never-answered work orders: key, activity, seconds waited. */
  readonly neverAnswered: ReadonlyArray<{
    readonly workOrderId: string;
    readonly activityId: string;
    readonly waitingSeconds: number;
  }>;
  readonly phases: ReadonlyArray<{ readonly phase: string; readonly seconds: number; readonly error: string | null }>;
  /** Every scenario as expected, every invariant holds, no phase failed. */
  readonly ok: boolean;
  readonly outage: { readonly kind: string; readonly totalMs: number } | null;
  readonly status: StackStatus;
  readonly seconds: number;
}

interface Context {
  readonly info: StackInfo;
  readonly control: StackControl;
  readonly db: Firestore;
  readonly pubsub: PubSub;
  /** A real client on the stack's storage emulator: the claims' objects are read through it. */
  readonly storage: Storage;
  readonly options: DemoOptions;
}

export async function runDemo(ctx: Context): Promise<DemoResult> {
  const started = Date.now();
  const run = Date.now().toString(36);
  const prefix = `WO-${run}-`;
  const plan = planOrders(run, ctx.options.orders);
  const of = (s: ScenarioId): PlannedOrder[] => plan.filter((o) => o.scenario === s);
  const published: { completionIds: Map<string, string>; poisonIds: string[] } = {
    completionIds: new Map(),
    poisonIds: [],
  };
  // Nobody publishes the completion of a never-answered order: there is nothing of it to account for.
  for (const o of plan)
    if (o.scenario !== 'neverAnswered')
      published.completionIds.set(
        o.workOrderId,
        messageDocId('WorkOrderCompleted', o.workOrderId, `done-${o.workOrderId}`),
      );
  const commands: string[] = [];
  const phases: Array<{ phase: string; seconds: number; error: string | null }> = [];
  let messages = 0;
  const topic = ctx.pubsub.topic(TOPICS.completions);
  const publishCompletion = async (workOrderId: string): Promise<void> => {
    await topic.publishMessage({ json: completionOf(workOrderId), attributes: COMPLETION_ATTRIBUTES });
    messages += 1;
  };
  /** The inbox documents the orders' completions map to (read by id). */
  const completionDocs = (orders: readonly PlannedOrder[]): Promise<FirebaseFirestore.DocumentSnapshot[]> =>
    ctx.db.getAll(...orders.map((o) => ctx.db.collection(INBOX).doc(published.completionIds.get(o.workOrderId) ?? '')));
  // An object, not a `let`: phases set it inside closures, where TypeScript would not see the assignment.
  const listing: { waitingListed: Snapshot['waitingListed'] } = { waitingListed: null };
  const objectCache = new Map<string, ObjectView>();
  /** This run's state; `fresh` reads every claim's object again (the last snapshot: an object may have gone since). */
  const snapshot = async (fresh = false): Promise<Snapshot> => {
    const [stored, status] = await Promise.all([
      readSnapshot(ctx.db, prefix, published.poisonIds),
      ctx.control.status(),
    ]);
    const ours = <T>(byWorkOrder: Readonly<Record<string, T>>): Record<string, T> =>
      Object.fromEntries(Object.entries(byWorkOrder).filter(([workOrderId]) => workOrderId.startsWith(prefix)));
    const ids = new Set([
      ...stored.inbox.map((d) => d.id),
      ...published.completionIds.values(),
      ...published.poisonIds,
    ]);
    const [objects, payloadObjects] = await Promise.all([
      readClaimObjects(ctx.storage, stored.inbox, fresh ? null : objectCache),
      readPayloadObjects(ctx.storage, ctx.info.buckets.payloads, ids),
    ]);
    return {
      ...stored,
      reminders: ours(providerStats(status).remindersByWorkOrder),
      reportsSent: ours(providerStats(status).reports),
      objects,
      payloadObjects,
      waitingListed: listing.waitingListed,
    };
  };
  const settled = (s: Snapshot, orders: readonly PlannedOrder[]): number =>
    orders.filter((o) => observeOrder(s, o.workOrderId, showsOf(o.scenario)) === scenarioOf(o.scenario).expected)
      .length;
  // A phase that fails (a timeout) is recorded and the run goes on: the report then shows where things stand.
  const phase = async (name: string, body: () => Promise<void>): Promise<void> => {
    const t = Date.now();
    ctx.options.progress(0, 0, name);
    let error: string | null = null;
    try {
      await body();
    } catch (err) {
      error = errorMessage(err);
    }
    phases.push({ phase: name, seconds: Math.round((Date.now() - t) / 100) / 10, error });
  };
  /** Waits until every order given has its expected outcome, reporting progress over the whole plan. */
  const untilSettled = async (orders: readonly PlannedOrder[], what: string): Promise<void> => {
    await until(
      async () => {
        const s = await snapshot();
        ctx.options.progress(settled(s, plan), plan.length, what);
        return settled(s, orders) === orders.length;
      },
      what,
      ctx.options.phaseTimeoutMs,
    );
  };
  const cli = async (...argv: string[]): Promise<string> => {
    commands.push(`npm run inbox -- ${argv.join(' ')}`);
    let out = '';
    const code = await runCli(
      argv,
      { out: (t) => (out += `${t}\n`), err: (t) => (out += `${t}\n`), confirm: async () => true },
      {
        ...process.env,
        GOOGLE_CLOUD_PROJECT: ctx.info.projectId,
        FIRESTORE_EMULATOR_HOST: ctx.info.firestoreHost,
      },
    );
    if (code !== 0) throw new Error(`inbox ${argv.join(' ')} exited ${code}:\n${out}`);
    return out;
  };
  let outage: DemoResult['outage'] = null;

  // First, while Pub/Sub has seen no failures: the emulator stretches its redelivery backoff after many failed pushes.
  await phase('receiver cut off from Firestore: dead letters', async () => {
    const orders = of('deadLetter');
    await ctx.control.receiverLine('refuse');
    try {
      await Promise.all(orders.map((o) => publishCompletion(o.workOrderId)));
      await until(
        async () => (await completionDocs(orders)).every((s) => s.get('reason') === 'DEAD_LETTERED'),
        'Pub/Sub to dead-letter the completions',
        ctx.options.phaseTimeoutMs,
      );
    } finally {
      await ctx.control.receiverLine('forward');
    }
  });

  await phase('poison messages and early completions', async () => {
    for (const p of POISON_MESSAGES) {
      const messageId = await topic.publishMessage({ data: p.data, attributes: { ...p.attributes } });
      messages += 1;
      published.poisonIds.push(invalidDocId(completionSubscription(ctx.info.projectId), messageId));
    }
    // The completion of an "overtake" order is in the inbox before its process exists.
    await Promise.all(of('overtake').map((o) => publishCompletion(o.workOrderId)));
    await until(
      async () => (await completionDocs(of('overtake'))).every((s) => s.exists),
      'the early completions to be stored',
      ctx.options.phaseTimeoutMs,
    );
  });

  const first = plan.filter((o) => o.scenario !== 'outage');
  await phase('work orders started', async () => {
    await startOrders(ctx, first);
  });

  await phase('double token by a forced repair', async () => {
    for (const o of of('ambiguous')) {
      const instanceId = await waitingInstance(ctx, o.workOrderId);
      await cli('repair', 'move-token', '--instance', instanceId, '--activity', 'waitForCompletion', '--force');
      await publishCompletion(o.workOrderId);
    }
  });

  await phase('Firestore outage during delivery', async () => {
    const wave = of('outage');
    const half = Math.ceil(wave.length / 2);
    await startOrders(ctx, wave.slice(0, half));
    // The emulator goes down while the first half is being delivered; the second half starts during the outage and retries.
    const [report] = await Promise.all([
      ctx.control.firestoreOutage(ctx.options.outageMs),
      startOrders(ctx, wave.slice(half)),
    ]);
    outage = { kind: report.kind, totalMs: report.totalMs };
  });

  await phase('everything delivered and correlated', async () => {
    await untilSettled(
      plan.filter((o) => o.scenario !== 'deadLetter' && o.scenario !== 'neverAnswered'),
      'delivery and correlation',
    );
  });

  await phase('large reports: what an operator sees', async () => {
    // `inbox show` stats a reference and reads an offloaded payload pinned to its generation: both must be FOUND.
    for (const o of plan.filter((x) => scenarioOf(x.scenario).report !== undefined)) {
      const out = await cli('show', published.completionIds.get(o.workOrderId) ?? '');
      if (!out.includes(': FOUND ('))
        throw new Error(
          `inbox show of ${o.workOrderId}'s completion does not say its object is FOUND:\n${out.slice(0, 2_000)}`,
        );
    }
  });

  await phase('the provider never answers: escalated, still waiting', async () => {
    const orders = of('neverAnswered');
    // The timer fires after completionDeadline (seconds); the escalation records, then reminds the provider.
    await until(
      async () => {
        const s = await snapshot();
        return orders.every(
          (o) => s.escalations.some((e) => e.workOrderId === o.workOrderId) && (s.reminders[o.workOrderId] ?? 0) > 0,
        );
      },
      'the never-answered work orders to be escalated',
      ctx.options.phaseTimeoutMs,
    );
    listing.waitingListed = await listWaiting(cli, prefix);
    // Asked once, so checked once: waiting on a listing that cannot change would only use up the timeout.
    const s = await snapshot();
    const off = orders.filter(
      (o) => observeOrder(s, o.workOrderId, showsOf(o.scenario)) !== scenarioOf(o.scenario).expected,
    );
    if (off.length > 0)
      throw new Error(
        `${off.length} never-answered order(s) not as expected, e.g. ${off[0]?.workOrderId ?? ''}: ${observeOrder(s, off[0]?.workOrderId ?? '', showsOf('neverAnswered'))}`,
      );
  });

  await phase('one requeue for the dead letters', async () => {
    await cli('requeue', '--reason', 'DEAD_LETTERED', '--yes');
    await untilSettled(plan, 'requeued dead letters');
  });

  const evaluation = evaluate(plan, published, await snapshot(true));
  const ok = evaluation.ok && phases.every((p) => p.error === null);
  const listed = listing.waitingListed ?? [];
  const neverAnswered = of('neverAnswered').flatMap((o) =>
    listed
      .filter((w) => w.businessKey === o.workOrderId)
      .map((w) => ({ workOrderId: o.workOrderId, activityId: w.activityId, waitingSeconds: w.waitingSeconds })),
  );
  return {
    ok,
    run,
    orders: plan.length,
    messagesPublished: messages + providerStats(await ctx.control.status()).completionsPublished,
    evaluation,
    commands,
    neverAnswered,
    phases,
    outage,
    status: await ctx.control.status(),
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** The waiting points `inbox waiting --message WorkOrderCompleted` lists of this run's work orders, all pages. */
async function listWaiting(
  cli: (...argv: string[]) => Promise<string>,
  prefix: string,
): Promise<NonNullable<Snapshot['waitingListed']>> {
  const rows: Array<{ businessKey: string; activityId: string; waitingSeconds: number }> = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const out = await cli(
      '--json',
      'waiting',
      '--message',
      'WorkOrderCompleted',
      '--page-size',
      '1000',
      ...(after === null ? [] : ['--after', after]),
    );
    const parsed = JSON.parse(out) as {
      waitingPoints?: Array<{ businessKey?: unknown; activityId?: unknown; waitingSeconds?: unknown }>;
      next?: unknown;
    };
    for (const p of parsed.waitingPoints ?? []) {
      if (typeof p.businessKey === 'string' && p.businessKey.startsWith(prefix))
        rows.push({
          businessKey: p.businessKey,
          activityId: String(p.activityId),
          waitingSeconds: Number(p.waitingSeconds),
        });
    }
    if (typeof parsed.next !== 'string') return rows;
    after = parsed.next;
  }
  throw new Error('inbox waiting: more than 100 pages of 1,000 waiting points');
}

/** Starts work orders through startProcess (idempotent per business key), 8 at a time, retrying 5xx and refused connections. */
async function startOrders(ctx: Context, orders: readonly PlannedOrder[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < orders.length) {
      const o = orders[next++] as PlannedOrder;
      const s = scenarioOf(o.scenario);
      const body = JSON.stringify({
        processKey: 'work-order-execution',
        businessKey: o.workOrderId,
        variables: { ...s.variables, workOrderId: o.workOrderId, providerScript: s.providerScript },
      });
      await until(
        async () => {
          try {
            const response = await fetch(ctx.info.functions.startProcess, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
              signal: AbortSignal.timeout(15_000),
            });
            if (response.status >= 400 && response.status < 500)
              throw new Error(`startProcess ${o.workOrderId}: ${response.status} ${await response.text()}`);
            return response.ok;
          } catch (err) {
            if (err instanceof Error && err.message.startsWith('startProcess')) throw err;
            return false;
          }
        },
        `startProcess for ${o.workOrderId}`,
        ctx.options.phaseTimeoutMs,
        250,
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** The instance of a work order once its token waits at "Wait for completion". */
async function waitingInstance(ctx: Context, workOrderId: string): Promise<string> {
  return until(
    async () => {
      // The waiting point lives in the work order's key document.
      const key = await refs.correlationKey(ctx.db, workOrderId).get();
      const waiting = (key.get('waiting') ?? []) as Array<{ processInstanceId?: string }>;
      return waiting[0]?.processInstanceId;
    },
    `${workOrderId} to wait for its completion`,
    ctx.options.phaseTimeoutMs,
  );
}

/** Polls `check` until it returns a value other than undefined/false; technical errors (an outage) count as "not yet". */
async function until<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs: number,
  everyMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: string | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('startProcess')) throw err;
      lastError = errorMessage(err);
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError === undefined ? '' : ` (last error: ${lastError})`}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
