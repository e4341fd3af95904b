import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { publishStepKey } from '../../functions/src/bpmn/model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { JobState } from '../../functions/src/engine/state';
import { loadInstance } from '../../functions/src/engine/store/apply';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import {
  MESSAGE_ID_ATTRIBUTE,
  publishStepOf,
  publishSteps,
  type SentMessage,
} from '../../functions/src/jobs/publish-steps';
import { freshFirestores } from '../support/firestore';

/**
 * Message throw events, send tasks with a messageRef and message end events
 * publishing through the Pub/Sub emulator (test/fixtures/bpmn-publish/): each
 * is a job, published after the commit that reached it, and a retried
 * publish carries the same `inboxMessageId`, what a receiver keeps one by.
 */
const MODEL = join(__dirname, '..', 'fixtures', 'bpmn-publish', 'notify.bpmn');
const fresh = freshFirestores();
const { db, projectId } = fresh.project('publish-steps');
const pubsub = new PubSub({ projectId });
const TOPIC = 'case-events';
const SENDS: SentMessage[] = [
  { name: 'CaseNotified', topic: TOPIC, nameAttribute: 'eventType' },
  { name: 'CaseShipped', topic: TOPIC, nameAttribute: 'eventType', payload: (v) => ({ caseId: v.caseId }) },
  { name: 'CaseClosed', topic: TOPIC, nameAttribute: 'kind' },
];

afterAll(async () => {
  await pubsub.close();
});

interface Pulled {
  readonly attributes: Record<string, string>;
  readonly data: unknown;
}

/** Receives `expected` messages on the subscription (acked as they come). */
function receive(subscription: string, expected: number): Promise<Pulled[]> {
  const got: Pulled[] = [];
  const sub = pubsub.subscription(subscription);
  return new Promise<Pulled[]>((resolve, reject) => {
    sub.on('error', reject);
    sub.on('message', (m: { attributes: Record<string, string>; data: Buffer; ack(): void }) => {
      m.ack();
      got.push({ attributes: { ...m.attributes }, data: JSON.parse(m.data.toString('utf8')) as unknown });
      if (got.length === expected) void sub.close().then(() => resolve(got));
    });
  });
}

test('each publishing element is a job that publishes after the commit; a retry carries the same inboxMessageId', async () => {
  const [topic] = await pubsub.createTopic(TOPIC);
  await topic.createSubscription('case-events-pull');
  const received = receive('case-events-pull', 4);
  const model = await loadProcessModel(MODEL);
  const steps = publishSteps([model], { sends: SENDS }, async (t, data, attributes) =>
    pubsub.topic(t).publishMessage({ data, attributes: { ...attributes } }),
  );
  expect(Object.keys(steps).sort()).toEqual(
    ['closed', 'notified', 'ship'].map((id) => publishStepKey('fixture-notify', id)),
  );
  const engine = new Engine([model], {}, new Set(Object.keys(steps)));

  const s = await startProcessInstance(db, engine, {
    processKey: 'fixture-notify',
    businessKey: 'C-1',
    variables: { caseId: 'C-1', amount: 12 },
    now: new Date(),
  });
  const order: string[] = [];
  let jobs: readonly JobState[] = s.jobs;
  for (let first = true; jobs.length > 0; first = false) {
    const job = jobs[0] as JobState;
    order.push(job.activityId);
    const instance = await runUnitOfWork(db, (uow) => loadInstance(uow, job.processInstanceId));
    const handler = publishStepOf(steps, instance.result?.processKey ?? '', job.activityId);
    if (handler === undefined || instance.result === null)
      throw new Error(`no handler or instance for ${job.activityId}`);
    // The first publish runs twice, as after a crash before runJob recorded it: the same job, the same id.
    for (let run = 0; run < (first ? 2 : 1); run++) await handler({ job, instance: instance.result, now: new Date() });
    const done = await completeJobRun(db, engine, job, {}, new Date());
    if (done.status !== 'COMPLETED') throw new Error(`job ${job.id} ${done.status}`);
    jobs = done.jobs;
  }
  expect(order).toEqual(['notified', 'ship', 'closed']);
  expect((await refs.instance(db, s.instance.id).get()).get('status')).toBe('COMPLETED');

  const pulled = await received;
  expect(pulled).toHaveLength(4);
  const notified = pulled.filter((m) => m.attributes.eventType === 'CaseNotified');
  expect(notified).toHaveLength(2);
  expect(new Set(notified.map((m) => m.attributes[MESSAGE_ID_ATTRIBUTE])).size).toBe(1);
  const firstId = notified[0]?.attributes[MESSAGE_ID_ATTRIBUTE];
  expect(notified[0]?.data).toEqual({ caseId: 'C-1', amount: 12, [MESSAGE_ID_ATTRIBUTE]: firstId });
  const shipped = pulled.find((m) => m.attributes.eventType === 'CaseShipped');
  expect(shipped?.data).toEqual({ caseId: 'C-1', [MESSAGE_ID_ATTRIBUTE]: shipped?.attributes[MESSAGE_ID_ATTRIBUTE] });
  expect(shipped?.attributes[MESSAGE_ID_ATTRIBUTE]).not.toBe(firstId);
  expect(pulled.find((m) => m.attributes.kind === 'CaseClosed')?.attributes[MESSAGE_ID_ATTRIBUTE]).toMatch(
    /^[0-9a-f]{40}$/,
  );
});
