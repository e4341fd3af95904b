import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseProcessModel } from '../../../../functions/src/bpmn/parse-model';
import {
  checkSizes,
  DEFAULT_SIZES,
  planChaos,
  RACE,
  RACE_DEADLINES_S,
  RACE_OFFSET_MS,
  SHARES,
  TRANCHES,
  type ChaosSizes,
} from '../../chaos/plan';
import { RELAYS } from '../../chaos/plan-schedule';

const sizes = (over: Partial<ChaosSizes> = {}): ChaosSizes => ({
  ...DEFAULT_SIZES,
  orders: 50,
  messages: 300,
  ...over,
});

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
    for (const m of plan.messages)
      if (m.kind === 'duplicate' || m.kind === 'collision') expect(ids.has(m.docId)).toBe(true);
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
      // A racing tranche is in no step (published after its order's other tranches, so after the start).
      const before = plan.messages.filter(
        (m, i) =>
          m.kind === 'completion' &&
          m.workOrderId === order.workOrderId &&
          position.has(`msg:${i}`) &&
          (position.get(`msg:${i}`) ?? 0) < start,
      ).length;
      expect([order.workOrderId, before > 0]).toEqual([order.workOrderId, order.overtakes]);
    }
    plan.messages.forEach((m, i) => {
      if (m.kind === 'duplicate' || m.kind === 'collision')
        expect(position.get(`msg:${i}`) ?? -1).toBeGreaterThan(position.get(`msg:${m.of}`) ?? Infinity);
    });
  });

  test('repairs: the asked number, at steps inside the run, in order, from a stream of their own (the rest of the plan unchanged)', () => {
    const plan = planChaos(sizes({ repairs: 12 }));
    expect(plan.repairs).toHaveLength(12);
    for (const r of plan.repairs) {
      expect(r.atStep).toBeGreaterThanOrEqual(0);
      expect(r.atStep).toBeLessThan(plan.steps.length);
      expect(r.pick).toBeGreaterThanOrEqual(0);
      expect(r.pick).toBeLessThan(1);
      expect(['cancel', 'move', 'requeue']).toContain(r.kind);
    }
    expect(plan.repairs.map((r) => r.atStep)).toEqual([...plan.repairs.map((r) => r.atStep)].sort((a, b) => a - b));
    expect(new Set(plan.repairs.map((r) => r.kind)).size).toBeGreaterThan(1);
    const without = planChaos(sizes({ repairs: 0 }));
    expect(without.repairs).toEqual([]);
    expect({ steps: without.steps, faults: without.faults, races: without.races }).toEqual({
      steps: plan.steps,
      faults: plan.faults,
      races: plan.races,
    });
  });

  test('faults: the asked number of each, at steps inside the run, on existing relays', () => {
    const plan = planChaos(sizes({ relayKills: 5, firestoreRestarts: 2, dispatchFaults: 3 }));
    const of = (kind: string): number => plan.faults.filter((f) => f.kind === kind).length;
    expect([of('relay-kill'), of('firestore-restart'), of('dispatch-faults'), of('deploy')]).toEqual([5, 2, 3, 1]);
    for (const f of plan.faults) {
      expect(f.atStep).toBeGreaterThanOrEqual(0);
      expect(f.atStep).toBeLessThan(plan.steps.length);
      expect(f.target).toBeLessThan(RELAYS);
    }
    expect(plan.faults.map((f) => f.atStep)).toEqual([...plan.faults.map((f) => f.atStep)].sort((a, b) => a - b));
  });

  test('races: a seeded share of the orders, each racing its latest tranche, which nothing copies and no step publishes', () => {
    const plan = planChaos(sizes({ orders: 400, messages: 2_000, seed: 11 }));
    expect(plan.races.length).toBeGreaterThan(400 * SHARES.race * 0.7);
    expect(plan.races.length).toBeLessThan(400 * SHARES.race * 1.3);
    expect(planChaos(sizes({ orders: 400, messages: 2_000, seed: 11 })).races).toEqual(plan.races);
    const published = new Set(plan.steps.flatMap((s) => (s.kind === 'publish' ? [s.message] : [])));
    const copied = new Set(
      plan.messages.flatMap((m) => (m.kind === 'duplicate' || m.kind === 'collision' ? [m.of] : [])),
    );
    const raced = new Set(plan.races.map((r) => r.message));
    for (const r of plan.races) {
      const m = plan.messages[r.message];
      expect(m?.kind === 'completion' && m.workOrderId === r.workOrderId).toBe(true);
      expect([r.workOrderId, published.has(r.message), copied.has(r.message)]).toEqual([r.workOrderId, false, false]);
      const others = plan.messages.flatMap((o, i) =>
        o.kind === 'completion' && o.workOrderId === r.workOrderId && i !== r.message ? [i] : [],
      );
      expect(others.every((i) => published.has(i))).toBe(true);
      expect(others).toHaveLength(TRANCHES - 1);
      expect(RACE_DEADLINES_S.map((n) => `PT${n}S`)).toContain(r.deadline);
      expect(r.offsetMs).toBeGreaterThanOrEqual(RACE_OFFSET_MS.from);
      expect(r.offsetMs).toBeLessThanOrEqual(RACE_OFFSET_MS.to);
    }
    // Every other completion is published by a step.
    plan.messages.forEach((m, i) => {
      if (m.kind !== 'duplicate' && !raced.has(i) && m.kind !== 'poison') expect(published.has(i)).toBe(true);
    });
    // Well ahead of the due time (the completion should win), and close to it or after (the timer should).
    expect(plan.races.filter((r) => r.offsetMs < -2_500).length).toBeGreaterThan(10);
    expect(plan.races.filter((r) => r.offsetMs > -1_000).length).toBeGreaterThan(10);
    // Overtaking orders race too, never with their early tranche.
    expect(plan.races.some((r) => plan.orders.find((o) => o.workOrderId === r.workOrderId)?.overtakes === true)).toBe(
      true,
    );
  });

  test('the chaos model races exactly there: an interrupting timer of ${raceDeadline} (default 14 days) on the last wait, to its own path', async () => {
    const model = await parseProcessModel(
      readFileSync(join(__dirname, '../../chaos/bpmn/work-order-execution.bpmn'), 'utf8'),
    );
    const boundary = model.nodes[RACE.boundaryEventId];
    expect(boundary).toMatchObject({
      kind: 'boundaryTimer',
      attachedToId: RACE.waitId,
      cancelActivity: true,
      timer: { type: 'timeDuration', variable: RACE.variable, value: 'P14D' },
    });
    expect(model.nodes[RACE.waitId]?.kind).toBe('receiveTask');
    expect(model.nodes[RACE.overdueTaskId]).toMatchObject({ kind: 'sendTask', async: true });
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

test('the deploy of the second version: once, when half of the orders of the model that starts sooner have started', () => {
  const plan = planChaos(sizes({ seed: 9, orders: 200, messages: 1_000, inspections: 60 }));
  const [deploy] = plan.faults.filter((f) => f.kind === 'deploy');
  const inspected = new Set(plan.inspections.map((i) => i.workOrderId));
  const startsBefore = (mine: boolean) =>
    plan.steps.slice(0, deploy?.atStep ?? 0).filter((s) => s.kind === 'start' && inspected.has(s.workOrderId) === mine)
      .length;
  // Both models keep starts for after the deploy; one of them has started half of its orders.
  const [plain, second] = [startsBefore(false), startsBefore(true)];
  expect(plain).toBeLessThan(200 - 60);
  expect(second).toBeLessThan(60);
  expect(plain === Math.floor((200 - 60) / 2) || second === Math.floor(60 / 2)).toBe(true);
});
