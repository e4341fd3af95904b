/**
 * A backlog of buffered messages on one key is taken in one unit of work
 * up to a share of the unit's budget (engine/store/apply.ts,
 * BUFFERED_SHARE); the rest stays OPEN for the relay, so a long backlog
 * never makes the step that reaches the wait fail.
 */
import { z } from 'zod';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { BUFFERED_SHARE, UNIT_BUDGET } from '../../functions/src/engine/store/apply';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { DEFAULT_NAME_ATTRIBUTE, type MessageRegistry } from '../../functions/src/receiver/registry';
import { bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';
import { freshFirestores } from '../support/firestore';
import { storePushed } from '../support/inbox';

const { db } = freshFirestores().project('buffer-backlog');
const Payload = z.object({ caseId: z.string(), eventId: z.string() });
const REGISTRY: MessageRegistry = [
  {
    name: 'Tick',
    nameAttribute: DEFAULT_NAME_ATTRIBUTE,
    schema: Payload,
    correlationKey: (p: z.infer<typeof Payload>) => p.caseId,
    dedupKey: (p: z.infer<typeof Payload>) => p.eventId,
  },
];

test(`more buffered messages than a unit takes: ${BUFFERED_SHARE} are taken with the start, the rest stay OPEN`, async () => {
  // start → tick (wait for Tick) → count (sync) → back to tick: every Tick is awaited, without end.
  const model = await parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element('receiveTask', 'tick', 'messageRef="t" inbox:correlationKey="caseId"') +
        element('serviceTask', 'count') +
        chain('start', 'tick', 'count') +
        sequenceFlow('again', 'count', 'tick'),
      '<bpmn:message id="t" name="Tick" />',
    ),
  );
  const engine = new Engine(
    [model],
    { count: (v) => ({ ticks: (typeof v.ticks === 'number' ? v.ticks : 0) + 1 }) },
    new Set(),
    inboxBuffer(7 * 24 * 3_600_000),
  );
  const total = UNIT_BUDGET + 100;
  const t0 = Date.now() - 3_600_000;
  const ids: string[] = [];
  for (let i = 0; i < total; i += 50)
    ids.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, total - i) }, (_, k) =>
          storePushed(db, {
            name: 'Tick',
            registry: REGISTRY,
            payload: { caseId: 'backlog', eventId: `tick-${i + k}` },
            receivedAt: new Date(t0 + i + k),
            publishTime: new Date(t0 + i + k),
          }),
        ),
      )),
    );
  const s = await startProcessInstance(db, engine, {
    processKey: 'p',
    businessKey: 'backlog',
    variables: { caseId: 'backlog' },
    now: new Date(),
  });
  // The start itself is the first transition of the unit: it took BUFFERED_SHARE - 1 messages after it.
  expect(s.consumed).toHaveLength(BUFFERED_SHARE - 1);
  expect((await refs.instance(db, s.instance.id).get()).get('variables.ticks')).toBe(BUFFERED_SHARE - 1);
  const statuses = await db.getAll(...ids.map((id) => db.collection(INBOX).doc(id)));
  const open = statuses.filter((d) => d.get('status') === 'OPEN').map((d) => d.id);
  expect(open).toHaveLength(total - (BUFFERED_SHARE - 1));
  // The oldest were taken first: what is left is the younger end of the backlog.
  expect(new Set(open)).toEqual(new Set(ids.slice(BUFFERED_SHARE - 1)));
});
