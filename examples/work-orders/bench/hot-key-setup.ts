/**
 * Backlogs for `npm run bench:hot-key`, built with the project's own code:
 * instances of bench/fixtures/hot-key.bpmn (a token that takes `expected`
 * WorkOrderCompleted messages of its work order, one after the other) and
 * completions stored exactly as the receiver stores them (inbox document +
 * lane entry, storeMessage).
 */
import type { Firestore } from '@google-cloud/firestore';
import { join } from 'node:path';
import { loadProcessModel } from '../../../functions/src/engine/deployed';
import { Engine } from '../../../functions/src/engine/engine';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../../functions/src/engine/store/start-instance';
import { INBOX } from '../../../functions/src/inbox/document';
import { storeMessage } from '../../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../local/names';
import { inboxBuffer } from '../../../functions/src/relay/buffer';

export const HOT_KEY_PROCESS = 'hot-key';
const WEEK_MS = 7 * 24 * 3_600_000;

/**
 * The hot-key model with its counting task. `buffered`: the inbox as the
 * engine's buffer, as deployed (runtime.ts); false only for the ablation
 * that shows one transaction per message.
 */
export async function hotKeyEngine(buffered: boolean): Promise<Engine> {
  const model = await loadProcessModel(join(__dirname, 'fixtures', 'hot-key.bpmn'));
  const countRound = (v: Readonly<Record<string, unknown>>): Record<string, unknown> => {
    const rounds = (typeof v.rounds === 'number' ? v.rounds : 0) + 1;
    const expected = typeof v.expected === 'number' ? v.expected : 1;
    return { rounds, left: expected - rounds };
  };
  return new Engine([model], { countRound }, new Set(), buffered ? inboxBuffer(WEEK_MS) : null);
}

/** Starts one instance for `workOrderId` that waits for `expected` completions; returns its id. */
export async function startHotKeyInstance(
  db: Firestore,
  engine: Engine,
  workOrderId: string,
  expected: number,
): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: HOT_KEY_PROCESS,
    businessKey: workOrderId,
    variables: { workOrderId, expected },
    now: new Date(),
  });
  return started.instance.id;
}

/**
 * Stores completion number `seq` of a work order as receivePubSubPush does
 * (its own eventId, so each is a message of its own; publish times in `seq`
 * order, so the lane's order is `seq`). Returns the inbox id.
 */
export async function storeReport(
  db: Firestore,
  workOrderId: string,
  seq: number,
  shards: number,
  publishedAt: Date,
): Promise<string> {
  const payload = {
    workOrderId,
    completedItems: 1,
    completionTimestamp: '2026-11-29T10:00:00Z',
    eventId: `report-${workOrderId}-${seq}`,
  };
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: 'WorkOrderCompleted' },
      messageId: `m-${workOrderId}-${seq}`,
      publishTime: publishedAt.toISOString(),
    },
    subscription: 'projects/bench/subscriptions/work-order-completed-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] });
  if (draft.kind !== 'valid') throw new Error(`bench message is invalid: ${draft.error}`);
  const outcome = await storeMessage(db, draft, { envelope: parsed.envelope, now: new Date(), shards, offload: null });
  if (outcome.kind !== 'STORED') throw new Error(`${workOrderId}#${seq}: ${outcome.kind}`);
  return outcome.id;
}

/** What a drained scenario must look like: every message DONE, every instance COMPLETED having counted exactly its messages. */
export interface DrainCheck {
  readonly done: number;
  readonly notDone: number;
  readonly instancesCompleted: number;
  readonly instancesWrong: number;
  readonly ok: boolean;
}

export async function checkDrained(
  db: Firestore,
  messages: number,
  instances: ReadonlyMap<string, number>,
): Promise<DrainCheck> {
  const done = (await db.collection(INBOX).where('status', '==', 'DONE').count().get()).data().count;
  const all = (await db.collection(INBOX).count().get()).data().count;
  let instancesCompleted = 0;
  let instancesWrong = 0;
  const ids = [...instances.keys()];
  for (let i = 0; i < ids.length; i += 300) {
    const snaps = await db.getAll(...ids.slice(i, i + 300).map((id) => db.collection(COLLECTIONS.instances).doc(id)));
    for (const snap of snaps) {
      // Exactly once: the instance counted as many messages as it was sent, and ended.
      if (snap.get('status') === 'COMPLETED' && snap.get('variables.rounds') === instances.get(snap.id))
        instancesCompleted += 1;
      else instancesWrong += 1;
    }
  }
  return {
    done,
    notDone: all - done,
    instancesCompleted,
    instancesWrong,
    ok: done === messages && all === messages && instancesWrong === 0,
  };
}
