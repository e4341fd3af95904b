/**
 * Hostile input for the engine, not the envelope (issue 39): what a message
 * or a person can make a step do. A FEEL bomb sized by a message, and a
 * flood of messages into one instance's non-interrupting boundary event;
 * each must end in a bounded, visible state: an incident or a parked
 * document with its reason, never a step that runs without end, a
 * document that outgrows Firestore, or a message lost. (A completion of
 * about 1 MiB is refused at the door, naming the value, in
 * test/console/task-variables.test.ts and test/cli/tasks.test.ts; a step
 * that outgrows the instance document in test/engine/step-failed.test.ts.)
 */
import { z } from 'zod';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { MAX_LIVE_TOKENS, type InstanceState } from '../../functions/src/engine/state';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { DEFAULT_NAME_ATTRIBUTE, type MessageRegistry } from '../../functions/src/receiver/registry';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';
import { freshFirestores } from '../support/firestore';
import { storePushed } from '../support/inbox';

const fresh = freshFirestores();
const { db } = fresh.project('hostile-engine');
const log = createLogger(() => undefined);
const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const noQueue = {
  jobs: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
  timers: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
};
const Payload = z.object({ caseId: z.string(), eventId: z.string(), n: z.number().optional() });
const messageType = (name: string) => ({
  name,
  nameAttribute: DEFAULT_NAME_ATTRIBUTE,
  schema: Payload,
  correlationKey: (p: z.infer<typeof Payload>) => p.caseId,
  dedupKey: (p: z.infer<typeof Payload>) => p.eventId,
});
const REGISTRY: MessageRegistry = [messageType('Sized'), messageType('Ping')];

const MESSAGES = '<bpmn:message id="sized" name="Sized" /><bpmn:message id="ping" name="Ping" />';
const zeebe = (xml: string) =>
  xml.replace('xmlns:inbox=', 'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:inbox=');

const relay = (engine: Engine, now: Date) =>
  relayBatch(
    {
      db,
      engine,
      policy,
      retentionMs: 7 * 24 * 3_600_000,
      transactionTimeoutMs: 20_000,
      now: () => now,
      random: () => 0.5,
    },
    noQueue,
    log,
    { budgetMs: 600_000, parallelism: 8, batchSize: 400, shards: 16, clock: () => now.getTime() },
  );
const instanceOf = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).get()).data() as unknown as InstanceState;

describe('a FEEL bomb sized by a message', () => {
  test('the gateway that evaluates it stops the token with EXPRESSION_FAILED, the message is DONE, in bounded time', async () => {
    const model = await parseProcessModel(
      zeebe(
        bpmnDocument(
          element('startEvent', 'start') +
            element('receiveTask', 'wait', 'messageRef="sized" inbox:correlationKey="caseId"') +
            element('exclusiveGateway', 'big', 'default="small"') +
            element('userTask', 'review') +
            element('endEvent', 'done') +
            chain('start', 'wait', 'big') +
            '<bpmn:sequenceFlow id="large" sourceRef="big" targetRef="review"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">=count(for i in 1..n, j in 1..n return i * j) &gt; 10</bpmn:conditionExpression></bpmn:sequenceFlow>' +
            '<bpmn:sequenceFlow id="small" sourceRef="big" targetRef="done" />' +
            chain('review', 'done'),
          MESSAGES,
        ),
      ),
    );
    const engine = new Engine([model], {}, new Set(), inboxBuffer(7 * 24 * 3_600_000));
    const s = await startProcessInstance(db, engine, {
      processKey: 'p',
      businessKey: 'bomb',
      variables: { caseId: 'bomb' },
      now: new Date(),
    });
    const id = await storePushed(db, {
      name: 'Sized',
      registry: REGISTRY,
      payload: { caseId: 'bomb', eventId: 'bomb-1', n: 1_000_000_000 },
    });
    const started = Date.now();
    const summary = await relay(engine, new Date());
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(summary.correlated).toBe(1);
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    const stored = await instanceOf(s.instance.id);
    expect(stored.status).toBe('INCIDENT');
    expect(stored.incidents.map((i) => [i.reason, i.activityId])).toEqual([['EXPRESSION_FAILED', 'big']]);
    expect(stored.incidents[0]?.message).toMatch(/condition of flow large: FEEL .*ran longer than 100 ms/);
  });
});

describe('a flood of messages into a non-interrupting boundary event of one instance', () => {
  /**
   * The bound plus 100 in `npm test` (about 2.5 min on 2 cores: every step of an instance near the bound reads
   * and writes a document of some 300 KB); INBOX_HOSTILE_FLOOD=10000 runs the ten thousand.
   */
  const FLOOD = Number(process.env.INBOX_HOSTILE_FLOOD ?? MAX_LIVE_TOKENS + 100);

  test(`${FLOOD} messages: tokens up to the bound, every further message PARKED TOKEN_LIMIT, none lost`, async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        element('startEvent', 'start') +
          element('userTask', 'work') +
          element(
            'boundaryEvent',
            'pinged',
            'attachedToRef="work" cancelActivity="false" inbox:correlationKey="caseId"',
            '<bpmn:messageEventDefinition messageRef="ping" />',
          ) +
          element('userTask', 'answer') +
          element('endEvent', 'done') +
          element('endEvent', 'answered') +
          chain('start', 'work', 'done') +
          chain('pinged', 'answer', 'answered'),
        MESSAGES,
      ),
    );
    const engine = new Engine([model], {}, new Set(), inboxBuffer(7 * 24 * 3_600_000));
    const s = await startProcessInstance(db, engine, {
      processKey: 'p',
      businessKey: 'flood',
      variables: { caseId: 'flood' },
      now: new Date(),
    });
    // Stored (as the receiver stores them) and relayed a slice at a time, as a relay keeps up with arrivals.
    const ids: string[] = [];
    let now = Date.now();
    for (let from = 0; from < FLOOD; from += 500) {
      const slice = Array.from({ length: Math.min(500, FLOOD - from) }, (_, i) => from + i);
      for (let i = 0; i < slice.length; i += 50)
        ids.push(
          ...(await Promise.all(
            slice.slice(i, i + 50).map((n) =>
              storePushed(db, {
                name: 'Ping',
                registry: REGISTRY,
                payload: { caseId: 'flood', eventId: `ping-${n}` },
                receivedAt: new Date(now + n),
                publishTime: new Date(now + n),
              }),
            ),
          )),
        );
      now += 60_000;
      await relay(engine, new Date(now));
    }
    const stored = await instanceOf(s.instance.id);
    expect(stored.activeExecutionIds).toHaveLength(MAX_LIVE_TOKENS);
    const statuses = new Map<string, number>();
    for (let i = 0; i < ids.length; i += 300) {
      const docs = await db.getAll(...ids.slice(i, i + 300).map((id) => db.collection(INBOX).doc(id)));
      for (const d of docs) {
        const key = `${String(d.get('status'))}/${String(d.get('reason') ?? '')}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    }
    // The first that fit made a token each; every other one waits PARKED with its reason, for a requeue.
    expect(Object.fromEntries(statuses)).toEqual({
      'DONE/': MAX_LIVE_TOKENS - 1,
      'PARKED/TOKEN_LIMIT': FLOOD - (MAX_LIVE_TOKENS - 1),
    });
    expect(stored.status).toBe('RUNNING');
  }, 3_600_000);
});
