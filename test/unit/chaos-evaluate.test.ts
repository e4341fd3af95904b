import { chaosLine, chaosPassed, evaluateChaos, type ChaosSnapshot } from '../../tools/chaos/evaluate';
import { DEFAULT_SIZES, planChaos, type ChaosPlan } from '../../tools/chaos/plan';

const plan: ChaosPlan = planChaos({ ...DEFAULT_SIZES, orders: 3, messages: 100, seed: 5 });
const poisonIds = plan.messages.filter((m) => m.kind === 'poison').map((_, i) => `poison-${i}`);

/** The snapshot a perfect run leaves: every completion DONE in its order's trail, copies parked or absorbed, one invoice each. */
function perfect(): ChaosSnapshot {
  const instances = plan.orders.map((o, i) => ({
    id: `pi-${i}`,
    businessKey: o.workOrderId,
    status: 'COMPLETED',
    correlatedMessages: plan.messages.flatMap((m) => (m.kind === 'completion' && m.workOrderId === o.workOrderId ? [m.docId] : [])),
  }));
  const instanceOf = (workOrderId: string): string => instances.find((i) => i.businessKey === workOrderId)?.id ?? '';
  const inbox = [
    ...plan.messages.flatMap((m) => (m.kind === 'completion' ? [{ id: m.docId, status: 'DONE', reason: null, processInstanceId: instanceOf(m.workOrderId), deadLettered: false, requeued: false }] : [])),
    ...plan.messages.flatMap((m) => (m.kind === 'collision' ? [{ id: m.collisionIds[0], status: 'PARKED', reason: 'KEY_COLLISION', processInstanceId: null, deadLettered: false, requeued: false }] : [])),
    ...poisonIds.map((id) => ({ id, status: 'PARKED', reason: 'INVALID_PAYLOAD', processInstanceId: null, deadLettered: false, requeued: false })),
  ];
  return {
    inbox,
    instances,
    invoiceJobs: instances.map((i) => ({ processInstanceId: i.id })),
    invoices: instances.map((i) => ({ workOrderId: i.businessKey, processInstanceId: i.id })),
  };
}

const firstCompletion = plan.messages.find((m) => m.kind === 'completion');
const completionId = firstCompletion?.kind === 'completion' ? firstCompletion.docId : '';

describe('chaos evaluation', () => {
  test('a perfect run: nothing lost or doubled, every order invoiced, the line says so', () => {
    const counts = evaluateChaos(plan, poisonIds, perfect());
    expect(counts.violations).toEqual([]);
    expect(chaosPassed(counts)).toBe(true);
    expect(counts).toMatchObject({ messages: 100, done: 12, lost: 0, doubleCorrelations: 0, doubleInvoices: 0, ordersInvoiced: 3, parkedByReason: { KEY_COLLISION: 1, INVALID_PAYLOAD: 1 } });
    expect(chaosLine(5, counts, 9)).toBe('chaos seed 5: messages 100, DONE 12, PARKED INVALID_PAYLOAD 1, KEY_COLLISION 1, dead-lettered 0 (requeued 0), lost 0, double correlations 0, double invoices 0, work orders invoiced 3/3 (9 s)');
  });

  const broken: Array<[string, (s: ChaosSnapshot) => ChaosSnapshot, Partial<{ lost: number; doubleCorrelations: number; doubleInvoices: number }>, string]> = [
    ['a completion without document', (s) => ({ ...s, inbox: s.inbox.filter((d) => d.id !== completionId) }), { lost: 1 }, 'no inbox document'],
    ['a completion left OPEN', (s) => ({ ...s, inbox: s.inbox.map((d) => (d.id === completionId ? { ...d, status: 'OPEN' } : d)) }), { lost: 1 }, 'still OPEN'],
    ['DONE but not in any trail (acked, never correlated)', (s) => ({ ...s, instances: s.instances.map((i) => ({ ...i, correlatedMessages: i.correlatedMessages.filter((id) => id !== completionId) })) }), { lost: 1 }, 'not in the audit trail'],
    ['a message in two trails', (s) => ({ ...s, instances: s.instances.map((i, n) => (n === 1 ? { ...i, correlatedMessages: [...i.correlatedMessages, completionId] } : i)) }), { doubleCorrelations: 1 }, 'double correlation'],
    ['two invoice jobs for one order', (s) => ({ ...s, invoiceJobs: [...s.invoiceJobs, { processInstanceId: 'pi-0' }] }), { doubleInvoices: 1 }, 'double invoice'],
    ['a poison message DONE', (s) => ({ ...s, inbox: s.inbox.map((d) => (d.id === poisonIds[0] ? { ...d, status: 'DONE', reason: null } : d)) }), { lost: 1 }, 'poison'],
    ['both payloads of a collision parked as collisions', (s) => {
      const c = plan.messages.find((m) => m.kind === 'collision');
      const second = c?.kind === 'collision' ? c.collisionIds[1] : '';
      return { ...s, inbox: [...s.inbox, { id: second, status: 'PARKED', reason: 'KEY_COLLISION', processInstanceId: null, deadLettered: false, requeued: false }] };
    }, { lost: 1 }, '2 collision documents'],
    ['a document nobody published', (s) => ({ ...s, inbox: [...s.inbox, { id: 'stray', status: 'DONE', reason: null, processInstanceId: null, deadLettered: false, requeued: false }] }), {}, 'unexpected document'],
    ['an order not completed', (s) => ({ ...s, instances: s.instances.map((i, n) => (n === 2 ? { ...i, status: 'RUNNING' } : i)) }), {}, 'not completed and invoiced'],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, counts, violation) => {
    const result = evaluateChaos(plan, poisonIds, breakIt(perfect()));
    expect(chaosPassed(result)).toBe(false);
    expect(result).toMatchObject(counts);
    expect(result.violations.join('\n')).toContain(violation);
  });
});
