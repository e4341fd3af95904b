import { itemBodyKey, itemBodyModel } from '../../functions/src/bpmn/item-body';
import { MAX_ITEMS } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { itemInstanceId } from '../../functions/src/engine/ids';
import { completeItems } from '../../functions/src/engine/item-transitions';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const timer = (d: string) =>
  `<bpmn:timerEventDefinition><bpmn:timeDuration>${d}</bpmn:timeDuration></bpmn:timerEventDefinition>`;
const mi = (attributes: string, body = '') =>
  body === ''
    ? `<bpmn:multiInstanceLoopCharacteristics ${attributes} />`
    : `<bpmn:multiInstanceLoopCharacteristics ${attributes}>${body}</bpmn:multiInstanceLoopCharacteristics>`;
/** start → check (an async task with `loop`) → done, and `extra` beside it. */
const withLoop = (loop: string, extra = '') =>
  parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element('serviceTask', 'check', 'inbox:async="true"', loop) +
        element('endEvent', 'done') +
        extra +
        chain('start', 'check', 'done'),
    ),
  );
const OVER_PARTS = mi('inbox:collection="parts" inbox:outputCollection="verdicts" inbox:outputElement="verdict"');

describe('multi-instance, the load', () => {
  test('reads the collection, the item variable (default item), the output and the completion condition', async () => {
    const model = await withLoop(
      mi(
        'isSequential="true" inbox:collection="parts" inbox:elementVariable="part"',
        '<bpmn:completionCondition>${numberOfCompletedInstances >= 2}</bpmn:completionCondition>',
      ),
    );
    expect(model.nodes.check?.loop).toMatchObject({
      sequential: true,
      collection: 'parts',
      cardinality: null,
      elementVariable: 'part',
      outputCollection: null,
      completionConditionText: '${numberOfCompletedInstances >= 2}',
    });
    expect((await withLoop(OVER_PARTS)).nodes.check?.loop?.elementVariable).toBe('item');
  });

  test.each([
    ['3', { literal: 3 }],
    ['${count}', { variable: 'count' }],
  ])('loopCardinality %s', async (text, cardinality) => {
    const model = await withLoop(mi('', `<bpmn:loopCardinality>${text}</bpmn:loopCardinality>`));
    expect(model.nodes.check?.loop?.cardinality).toEqual(cardinality);
  });

  test.each([
    ['no collection and no cardinality', mi(''), /check: a multi-instance activity without inbox:collection/],
    [
      'both',
      mi('inbox:collection="a"', '<bpmn:loopCardinality>2</bpmn:loopCardinality>'),
      /inbox:collection and loopCardinality together/,
    ],
    [
      'a cardinality that is an expression',
      mi('', '<bpmn:loopCardinality>${a + 1}</bpmn:loopCardinality>'),
      /loopCardinality "\$\{a \+ 1\}"/,
    ],
    ['an output without its element', mi('inbox:collection="a" inbox:outputCollection="b"'), /go together/],
    [
      'a collection that is no variable name',
      mi('inbox:collection="a.b"'),
      /inbox:collection "a.b" is not a variable name/,
    ],
    [
      'a completion condition that does not parse',
      mi('inbox:collection="a"', '<bpmn:completionCondition>${a ==}</bpmn:completionCondition>'),
      /check: completionCondition: /,
    ],
    ['a standard loop', '<bpmn:standardLoopCharacteristics />', /check: a standard loop .* is not run/],
  ])('refused: %s', async (_what, loop, message) => {
    await expect(withLoop(loop)).rejects.toThrow(message);
  });

  test('an error boundary event on it is refused; a timer is taken', async () => {
    await expect(
      withLoop(OVER_PARTS, element('boundaryEvent', 'err', 'attachedToRef="check"', '<bpmn:errorEventDefinition />')),
    ).rejects.toThrow(/err: an error boundary event on multi-instance activity check/);
    const model = await withLoop(OVER_PARTS, element('boundaryEvent', 'late', 'attachedToRef="check"', timer('P1D')));
    expect(model.nodes.check).toMatchObject({ boundaryEventIds: ['late'] });
  });
});

describe('multi-instance, the item body', () => {
  test('a task alone between a start and an end, without its loop and boundary events', async () => {
    const model = await withLoop(OVER_PARTS, element('boundaryEvent', 'late', 'attachedToRef="check"', timer('P1D')));
    const body = itemBodyModel(model, 'check');
    expect(body.key).toBe('p#check');
    expect(body.key).toBe(itemBodyKey('p', 'check'));
    expect(Object.keys(body.nodes).sort()).toEqual(['#end', '#start', 'check']);
    expect(body.nodes.check).toMatchObject({
      kind: 'serviceTask',
      boundaryEventIds: [],
      incoming: ['#in'],
      outgoing: ['#out'],
    });
    expect(body.nodes.check).not.toHaveProperty('loop');
    expect(new Engine([model], {}, new Set(['check'])).model('p#check')).toEqual(body);
  });

  test('a subprocess with everything drawn inside it', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        element('startEvent', 'start') +
          element(
            'subProcess',
            'sub',
            '',
            OVER_PARTS +
              element('startEvent', 's0') +
              asyncTask('work') +
              element('endEvent', 'e0') +
              chain('s0', 'work', 'e0'),
          ) +
          element('endEvent', 'done') +
          chain('start', 'sub', 'done'),
      ),
    );
    const body = itemBodyModel(model, 'sub');
    expect(Object.keys(body.nodes).sort()).toEqual(['#end', '#start', 'e0', 's0', 'sub', 'work']);
    expect(Object.keys(body.flows).sort()).toEqual(['#in', '#out', 's0-work', 'work-e0']);
  });
});

describe('multi-instance, the pure core', () => {
  test('parallel: items in windows over counting shards, each with the caller’s variables, its item and loopCounter', async () => {
    const sim = new CoreSim(await withLoop(OVER_PARTS));
    const parts = Array.from({ length: 500 }, (_, i) => i);
    const t = sim.start({ parts, orderId: 'O' });
    const token = sim.tokenAt('check');
    expect(token).toMatchObject({ status: 'WAITING_ITEMS', items: { total: 500, shards: 25, window: 4 } });
    expect(t.calls).toHaveLength(100);
    expect(t.calls[0]).toMatchObject({
      processKey: 'p#check',
      variables: { orderId: 'O', item: 0, loopCounter: 1 },
      calledBy: { activityId: 'check', depth: 1, item: { index: 0 } },
    });
    // Shard k starts k, k + 25, k + 50, k + 75.
    expect(t.calls.filter((c) => c.calledBy.item?.index === 75 || c.calledBy.item?.index === 100)).toHaveLength(1);
  });

  test('sequential: one item at a time, in one shard', async () => {
    const sim = new CoreSim(await withLoop(mi('isSequential="true" inbox:collection="parts"')));
    expect(sim.start({ parts: ['a', 'b'] }).calls.map((c) => c.variables.item)).toEqual(['a']);
    expect(sim.tokenAt('check').items).toMatchObject({ shards: 1, window: 1 });
  });

  test.each([
    [{ parts: 'abc' }, /variable parts must be a list .*, not string/],
    [{}, /variable parts must be a list .*, not absent/],
  ])('a collection that is no list: INVALID_ITEMS (%j)', async (variables, message) => {
    const t = new CoreSim(await withLoop(OVER_PARTS)).start(variables);
    expect(t.calls).toEqual([]);
    expect(t.instance.incidents[0]).toMatchObject({ reason: 'INVALID_ITEMS', activityId: 'check' });
    expect(t.instance.incidents[0]?.message).toMatch(message);
  });

  test(`more than ${MAX_ITEMS} items: STEP_LIMIT, nothing started`, async () => {
    const t = new CoreSim(await withLoop(OVER_PARTS)).start({
      parts: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => i),
    });
    expect(t.calls).toEqual([]);
    expect(t.instance.incidents[0]).toMatchObject({ reason: 'STEP_LIMIT', activityId: 'check' });
  });

  test('loopCardinality from a variable; a negative one is INVALID_ITEMS', async () => {
    const model = await withLoop(mi('', '<bpmn:loopCardinality>${n}</bpmn:loopCardinality>'));
    expect(new CoreSim(model).start({ n: 3 }).calls.map((c) => c.variables)).toEqual([
      { n: 3, loopCounter: 1 },
      { n: 3, loopCounter: 2 },
      { n: 3, loopCounter: 3 },
    ]);
    expect(new CoreSim(model).start({ n: -1 }).instance.incidents[0]?.reason).toBe('INVALID_ITEMS');
  });

  test('a boundary timer terminates every item and ends the batch', async () => {
    const sim = new CoreSim(
      await withLoop(
        OVER_PARTS,
        element('boundaryEvent', 'late', 'attachedToRef="check"', timer('P1D')) +
          element('endEvent', 'lateEnd') +
          chain('late', 'lateEnd'),
      ),
    );
    sim.start({ parts: ['a', 'b', 'c'] });
    const { batch } = sim.tokenAt('check').items ?? { batch: '' };
    const t = sim.fire('late');
    expect(t.cancelCalls.map((c) => c.instanceId)).toEqual([0, 1, 2].map((i) => itemInstanceId(batch, i)));
    expect(t.endBatches).toEqual([{ batch, shards: 1 }]);
    expect(t.instance.status).toBe('COMPLETED');
  });

  test('the items done: the output collection is set, the running ones terminated, the token goes on', async () => {
    const sim = new CoreSim(await withLoop(OVER_PARTS));
    sim.start({ parts: ['a', 'b', 'c'] });
    const token = sim.tokenAt('check');
    const t = completeItems(
      sim.model,
      {},
      { instance: sim.instance!, execution: token, tokens: { ...sim.tokens } },
      ['x', null, 'z'],
      [1],
      sim.now,
    );
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { verdicts: ['x', null, 'z'] } });
    expect(t.cancelCalls).toEqual([
      { instanceId: itemInstanceId(token.items!.batch, 1), reason: 'the completion condition of check holds' },
    ]);
    expect(t.endBatches).toHaveLength(1);
  });
});
