import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { asyncTask, bpmnDocument, element, sequenceFlow } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

/**
 * Sequence flows without an `id`, which BPMN's schema allows (52 of Camunda
 * 7's 702 behaviour-test models have them): each gets an id derived from the
 * document, stable and distinct, that no element's own id can be; and ids
 * written with spaces around them, which bpmn-moddle cannot read as ids,
 * refused saying so (docs/bpmn-coverage.md).
 */
const model = (body: string) => parseProcessModel(bpmnDocument(body));
/** A flow with no id attribute at all. */
const idless = (source: string, target: string, condition?: string): string =>
  condition === undefined
    ? `<bpmn:sequenceFlow sourceRef="${source}" targetRef="${target}" />`
    : `<bpmn:sequenceFlow sourceRef="${source}" targetRef="${target}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${condition}</bpmn:conditionExpression></bpmn:sequenceFlow>`;

/**
 * start → fork → (a, b) → join → decide → done (ok) or rejected (not ok),
 * every flow without an id: the join counts tokens by the flow they came by,
 * and the gateway evaluates each flow's condition.
 */
const forkJoinDecide =
  element('startEvent', 's') +
  element('parallelGateway', 'fork') +
  asyncTask('a') +
  asyncTask('b') +
  element('parallelGateway', 'join') +
  element('exclusiveGateway', 'decide') +
  element('endEvent', 'done') +
  element('endEvent', 'rejected') +
  idless('s', 'fork') +
  idless('fork', 'a') +
  idless('fork', 'b') +
  idless('a', 'join') +
  idless('b', 'join') +
  idless('join', 'decide') +
  idless('decide', 'done', '${ok == true}') +
  idless('decide', 'rejected', '${ok == false}');

describe('sequence flows without an id', () => {
  test('a model whose flows have no id loads and runs: a fork, a join, a decision', async () => {
    const m = await model(forkJoinDecide);
    for (const ok of [true, false]) {
      const sim = new CoreSim(m);
      expect(
        sim
          .start({ ok })
          .jobs.map((j) => j.activityId)
          .sort(),
      ).toEqual(['a', 'b']);
      sim.finishJob('b');
      // The join waits for the token of the other flow, told apart by its derived id.
      expect(sim.instance?.status).toBe('RUNNING');
      const last = sim.finishJob('a');
      expect(last.instance.status).toBe('COMPLETED');
      expect(last.instance.incidents).toEqual([]);
      const ended = Object.values(sim.tokens)
        .filter((t) => t.status === 'ENDED')
        .map((t) => t.activityId);
      expect(ended).toContain(ok ? 'done' : 'rejected');
      expect(ended).not.toContain(ok ? 'rejected' : 'done');
    }
  });

  test('the derived ids: SOURCE->TARGET, stable across two parses, each flow its own, wired to its nodes', async () => {
    const first = await model(forkJoinDecide);
    const second = await model(forkJoinDecide);
    const ids = Object.keys(first.flows).sort();
    expect(Object.keys(second.flows).sort()).toEqual(ids);
    expect(ids).toEqual(
      [
        's->fork',
        'fork->a',
        'fork->b',
        'a->join',
        'b->join',
        'join->decide',
        'decide->done',
        'decide->rejected',
      ].sort(),
    );
    expect(first.flows['fork->a']).toMatchObject({ id: 'fork->a', sourceId: 'fork', targetId: 'a' });
    expect(first.nodes.fork?.outgoing).toEqual(['fork->a', 'fork->b']);
    expect(first.nodes.join?.incoming).toEqual(['a->join', 'b->join']);
    expect(first.flows['decide->done']?.conditionText).toBe('${ok == true}');
  });

  test('several id-less flows between one pair: numbered in document order after the first, all distinct', async () => {
    const m = await model(
      element('startEvent', 's') +
        element('inclusiveGateway', 'g') +
        element('endEvent', 'e') +
        idless('s', 'g') +
        idless('g', 'e', '${x > 1}') +
        idless('g', 'e', '${x > 2}') +
        idless('g', 'e', '${x > 3}'),
    );
    expect(m.nodes.g?.outgoing).toEqual(['g->e', 'g->e/2', 'g->e/3']);
    expect(['g->e', 'g->e/2', 'g->e/3'].map((id) => m.flows[id]?.conditionText)).toEqual([
      '${x > 1}',
      '${x > 2}',
      '${x > 3}',
    ]);
  });

  test('a derived id never takes a real one: flows and nodes named as a derived id would be written keep theirs', async () => {
    // Every spelling an XML id allows around the pair: the real flows keep their ids, the id-less ones get others.
    const real = ['s-e', 's_e', 's.e', 'Flow_s_e', 'se'];
    const m = await model(
      element('startEvent', 's') +
        element('inclusiveGateway', 'g') +
        element('endEvent', 'e') +
        sequenceFlow('s-g', 's', 'g') +
        real.map((id) => sequenceFlow(id, 'g', 'e')).join('') +
        idless('g', 'e') +
        idless('g', 'e'),
    );
    const ids = Object.keys(m.flows);
    expect(ids).toHaveLength(real.length + 3);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of real) expect(m.flows[id]).toMatchObject({ id, sourceId: 'g', targetId: 'e' });
    const derived = ids.filter((id) => id !== 's-g' && !real.includes(id));
    expect(derived).toEqual(['g->e', 'g->e/2']);
    // `>` and `/` are in no XML id: no element of any model can be named so.
    for (const id of derived) expect(id).toMatch(/[>/]/);
    expect(Object.keys(m.nodes)).not.toEqual(expect.arrayContaining(derived));
  });

  test('a flow node without an id is still refused: tokens, jobs and incidents name it', async () => {
    await expect(model(element('startEvent', 's') + '<bpmn:endEvent />')).rejects.toThrow(/an endEvent has no id/);
  });
});

describe('ids written with spaces around them', () => {
  test.each([
    [
      'a task',
      element('startEvent', 's') + '<bpmn:serviceTask id=" t " inbox:async="true" />' + sequenceFlow('f', 's', 't'),
      /bpmn:serviceTask id " t " has spaces around it: .*write id="t"/,
    ],
    [
      'a flow',
      element('startEvent', 's') +
        element('endEvent', 'e') +
        '<bpmn:sequenceFlow id="f " sourceRef="s" targetRef="e" />',
      /bpmn:sequenceFlow id "f " has spaces around it: .*write id="f"/,
    ],
    [
      'a reference to an element that exists once trimmed',
      element('startEvent', 's') +
        element('endEvent', 'e') +
        '<bpmn:sequenceFlow id="f" sourceRef=" s" targetRef="e" />',
      /^f: sourceRef " s" has spaces around it: .*write sourceRef="s"/,
    ],
  ])('%s: refused naming the id as written and what to write', async (_what, body, message) => {
    await expect(model(body)).rejects.toThrow(message);
  });

  test('calledElement, a string naming a process id, which never holds a space: trimmed, unambiguous', async () => {
    const m = await model(
      element('startEvent', 's') +
        element('callActivity', 'c', 'calledElement=" child "') +
        element('endEvent', 'e') +
        sequenceFlow('f1', 's', 'c') +
        sequenceFlow('f2', 'c', 'e'),
    );
    expect(m.nodes.c).toMatchObject({ kind: 'callActivity', calledProcess: 'child' });
  });

  test('an id that is no XML name inside either (a space within) is refused saying what an id may hold', async () => {
    await expect(
      model(element('startEvent', 's') + '<bpmn:endEvent id="the end" />' + sequenceFlow('f', 's', 'e')),
    ).rejects.toThrow(/bpmn:endEvent id "the end" is not an XML name/);
  });
});
