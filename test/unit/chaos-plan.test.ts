import { checkSizes, DEFAULT_SIZES, planChaos, RELAYS, TRANCHES, type ChaosSizes } from '../../tools/chaos/plan';

const sizes = (over: Partial<ChaosSizes> = {}): ChaosSizes => ({ ...DEFAULT_SIZES, orders: 50, messages: 300, ...over });

describe('chaos plan', () => {
  test('the same seed gives the same plan; another seed another one', () => {
    const a = planChaos(sizes({ seed: 42 }));
    const b = planChaos(sizes({ seed: 42 }));
    const c = planChaos(sizes({ seed: 43 }));
    expect(b.steps).toEqual(a.steps);
    expect(b.faults).toEqual(a.faults);
    expect(b.messages.map((m) => m.data.toString('hex'))).toEqual(a.messages.map((m) => m.data.toString('hex')));
    expect(c.steps).not.toEqual(a.steps);
  });

  test('the mix: TRANCHES completions per order, 1 % poison, 1 % collisions, duplicates make up the rest', () => {
    const plan = planChaos(sizes({ orders: 100, messages: 1_000 }));
    const count = (kind: string): number => plan.messages.filter((m) => m.kind === kind).length;
    expect(plan.messages).toHaveLength(1_000);
    expect(count('completion')).toBe(100 * TRANCHES);
    expect(count('poison')).toBe(10);
    expect(count('collision')).toBe(10);
    expect(count('duplicate')).toBe(1_000 - 400 - 20);
    // Every completion has its own document id; duplicates and collisions point at one of them.
    const ids = new Set(plan.messages.flatMap((m) => (m.kind === 'completion' ? [m.docId] : [])));
    expect(ids.size).toBe(400);
    for (const m of plan.messages) if (m.kind === 'duplicate' || m.kind === 'collision') expect(ids.has(m.docId)).toBe(true);
    expect(plan.steps.filter((s) => s.kind === 'start')).toHaveLength(100);
  });

  test('order: overtaking work orders have a completion before their start, the others none; copies come after their original', () => {
    const plan = planChaos(sizes({ orders: 200, messages: 1_000, seed: 7 }));
    const position = new Map<string, number>();
    plan.steps.forEach((s, i) => position.set(s.kind === 'start' ? `start:${s.workOrderId}` : `msg:${s.message}`, i));
    const overtaking = plan.orders.filter((o) => o.overtakes);
    expect(overtaking.length).toBeGreaterThan(5);
    expect(overtaking.length).toBeLessThan(50);
    for (const order of plan.orders) {
      const start = position.get(`start:${order.workOrderId}`) ?? -1;
      const before = plan.messages.filter((m, i) => m.kind === 'completion' && m.workOrderId === order.workOrderId && (position.get(`msg:${i}`) ?? 0) < start).length;
      expect([order.workOrderId, before > 0]).toEqual([order.workOrderId, order.overtakes]);
    }
    plan.messages.forEach((m, i) => {
      if (m.kind === 'duplicate' || m.kind === 'collision') expect(position.get(`msg:${i}`) ?? -1).toBeGreaterThan(position.get(`msg:${m.of}`) ?? Infinity);
    });
  });

  test('faults: the asked number of each, at steps inside the run, on existing relays', () => {
    const plan = planChaos(sizes({ relayKills: 5, firestoreRestarts: 2, dispatchFaults: 3 }));
    const of = (kind: string): number => plan.faults.filter((f) => f.kind === kind).length;
    expect([of('relay-kill'), of('firestore-restart'), of('dispatch-faults')]).toEqual([5, 2, 3]);
    for (const f of plan.faults) {
      expect(f.atStep).toBeGreaterThanOrEqual(0);
      expect(f.atStep).toBeLessThan(plan.steps.length);
      expect(f.target).toBeLessThan(RELAYS);
    }
    expect(plan.faults.map((f) => f.atStep)).toEqual([...plan.faults.map((f) => f.atStep)].sort((a, b) => a - b));
  });

  test.each([
    [{ messages: 100 }, 'messages: at least 202'],
    [{ orders: 0 }, 'orders: an integer of at least 1'],
    [{ relayKills: -1 }, 'relayKills'],
    [{ seed: 1.5 }, 'seed'],
  ])('sizes %p are refused with a message naming the option', (over, message) => {
    expect(() => checkSizes(sizes(over))).toThrow(message);
  });
});
