import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiffRefused, diffModels, touchedElements } from '../../functions/src/bpmn/model-diff';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';

/**
 * diffModels(): two versions of one process, element by element. The
 * fixtures of test/fixtures/bpmn-versions (v2 renames the wait and adds a
 * step), then one small model written inline and varied in one thing at a
 * time: each variation must be named by the aspect it changed, with the
 * values before and after, and by nothing else.
 */
const VERSIONS = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const fixture = (name: string): Promise<ProcessModel> => parseProcessModel(readFileSync(join(VERSIONS, name), 'utf8'));

interface Knobs {
  type: string;
  message: string;
  key: string;
  duration: string;
  assignee: string;
  called: string;
  collection: string;
  condition: string;
  process: string;
}
const BASE: Knobs = {
  type: 'ship',
  message: 'Approved',
  key: 'caseId',
  duration: 'PT1H',
  assignee: 'ana',
  called: 'child',
  collection: 'items',
  condition: '${amount &gt; 100}',
  process: 'p',
};

/** start → t (job of `type`) → gw → (if condition) w (receive task) | (default) u (user task) → c (call) → m (multi-instance) → wait (timer) → end. */
function xml(k: Knobs): string {
  const flow = (id: string, s: string, t: string, cond?: string): string =>
    cond === undefined
      ? `<bpmn:sequenceFlow id="${id}" sourceRef="${s}" targetRef="${t}" />`
      : `<bpmn:sequenceFlow id="${id}" sourceRef="${s}" targetRef="${t}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${cond}</bpmn:conditionExpression></bpmn:sequenceFlow>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
    xmlns:inbox="https://github.com/transactional-inbox/bpmn" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    id="d" targetNamespace="urn:test">
  <bpmn:message id="msg" name="${k.message}" />
  <bpmn:process id="${k.process}" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="${k.type}" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:exclusiveGateway id="gw" default="toUser" />
    <bpmn:receiveTask id="w" messageRef="msg" inbox:correlationKey="${k.key}" />
    <bpmn:userTask id="u" inbox:assignee="${k.assignee}" />
    <bpmn:callActivity id="c" calledElement="${k.called}" />
    <bpmn:serviceTask id="m" inbox:async="true"><bpmn:multiInstanceLoopCharacteristics inbox:collection="${k.collection}" /></bpmn:serviceTask>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>${k.duration}</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end" />
    ${flow('f1', 'start', 't')}${flow('f2', 't', 'gw')}${flow('toWait', 'gw', 'w', k.condition)}${flow('toUser', 'gw', 'u')}
    ${flow('f3', 'w', 'c')}${flow('f4', 'u', 'c')}${flow('f5', 'c', 'm')}${flow('f6', 'm', 'wait')}${flow('f7', 'wait', 'end')}
  </bpmn:process>
</bpmn:definitions>`;
}
const model = (k: Partial<Knobs> = {}): Promise<ProcessModel> => parseProcessModel(xml({ ...BASE, ...k }));

describe('v1 → v2 of the versions fixtures (the wait renamed, audit added before pay)', () => {
  let v1: ProcessModel;
  let v2: ProcessModel;
  beforeAll(async () => {
    [v1, v2] = await Promise.all([fixture('v1.bpmn'), fixture('v2.bpmn')]);
  });

  test('the renamed wait is removed and added; audit is added', () => {
    const diff = diffModels(v1, v2);
    expect(diff).toMatchObject({ processKey: 'case-handling', fromVersion: v1.version, toVersion: v2.version });
    expect(diff.identical).toBe(false);
    expect(diff.added).toEqual([
      { id: 'audit', kind: 'serviceTask', name: null },
      { id: 'waitDecision', kind: 'receiveTask', name: null },
    ]);
    expect(diff.removed).toEqual([{ id: 'waitApproval', kind: 'receiveTask', name: null }]);
  });

  test('the elements around them change their flows, the reminder its host; nothing else changes', () => {
    const diff = diffModels(v1, v2);
    expect(diff.changed.map((c) => [c.id, c.changes.map((x) => x.aspect)])).toEqual([
      ['pay', ['incoming']],
      ['prepare', ['outgoing']],
      ['remind', ['attachedTo']],
    ]);
    const remind = diff.changed.find((c) => c.id === 'remind');
    expect(remind?.changes).toEqual([
      { aspect: 'attachedTo', before: 'waitApproval (non-interrupting)', after: 'waitDecision (non-interrupting)' },
    ]);
    const pay = diff.changed.find((c) => c.id === 'pay');
    expect(pay?.changes).toEqual([{ aspect: 'incoming', before: 'waitApproval→f3', after: 'audit→f7' }]);
    expect(touchedElements(diff).sort()).toEqual(['pay', 'prepare', 'remind', 'waitApproval']);
  });

  test('flows: f7 added, f2 and f3 re-pointed, none removed', () => {
    const diff = diffModels(v1, v2);
    expect(diff.flowsAdded).toEqual([{ id: 'f7', sourceId: 'audit', targetId: 'pay', condition: null }]);
    expect(diff.flowsRemoved).toEqual([]);
    expect(diff.flowsChanged).toEqual([
      { id: 'f2', changes: [{ aspect: 'target', before: 'waitApproval', after: 'waitDecision' }] },
      {
        id: 'f3',
        changes: [
          { aspect: 'source', before: 'waitApproval', after: 'waitDecision' },
          { aspect: 'target', before: 'pay', after: 'audit' },
        ],
      },
    ]);
  });

  test('backwards, added and removed swap', () => {
    const forth = diffModels(v1, v2);
    const back = diffModels(v2, v1);
    expect(back.added).toEqual(forth.removed);
    expect(back.removed).toEqual(forth.added);
    expect(back.flowsRemoved).toEqual(forth.flowsAdded);
  });
});

describe('one change at a time: named by its aspect, before and after', () => {
  test('the same model twice is identical', async () => {
    const diff = diffModels(await model(), await model());
    expect(diff.identical).toBe(true);
    expect([diff.added, diff.removed, diff.changed, diff.flowsChanged]).toEqual([[], [], [], []]);
  });

  test.each<[string, Partial<Knobs>, string, string, string | null, string | null]>([
    ["a task's job type", { type: 'deliver' }, 't', 'handler', 'ship (job)', 'deliver (job)'],
    ["a wait's message name", { message: 'Decided' }, 'w', 'message', 'Approved', 'Decided'],
    ["a wait's correlation key", { key: 'orderId' }, 'w', 'correlationKey', 'variable caseId', 'variable orderId'],
    ["a timer's definition", { duration: 'P2D' }, 'wait', 'timer', 'timeDuration PT1H', 'timeDuration P2D'],
    [
      "a user task's assignment",
      { assignee: 'bo' },
      'u',
      'assignment',
      'assignee ana; candidateGroups -; formKey -',
      'assignee bo; candidateGroups -; formKey -',
    ],
    ["a call activity's called process", { called: 'other' }, 'c', 'calledProcess', 'child', 'other'],
    [
      'multi-instance characteristics',
      { collection: 'lines' },
      'm',
      'multiInstance',
      'parallel over variable items as item',
      'parallel over variable lines as item',
    ],
  ])('%s', async (_what, change, id, aspect, before, after) => {
    const diff = diffModels(await model(), await model(change));
    expect(diff.changed).toEqual([expect.objectContaining({ id, changes: [{ aspect, before, after }] })]);
    expect([diff.added, diff.removed, diff.flowsAdded, diff.flowsRemoved, diff.flowsChanged]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
  });

  test("a flow's condition", async () => {
    const diff = diffModels(await model(), await model({ condition: '${amount &gt; 500}' }));
    expect(diff.flowsChanged).toEqual([
      { id: 'toWait', changes: [{ aspect: 'condition', before: '${amount > 100}', after: '${amount > 500}' }] },
    ]);
    expect(diff.changed).toEqual([]);
  });

  test('a change of kind is named with the other aspects it brings', async () => {
    const from = await model();
    const to = await parseProcessModel(
      xml(BASE).replace(
        '<bpmn:receiveTask id="w" messageRef="msg" inbox:correlationKey="caseId" />',
        '<bpmn:serviceTask id="w" inbox:async="true" />',
      ),
    );
    const w = diffModels(from, to).changed.find((c) => c.id === 'w');
    expect(w?.kind).toBe('serviceTask');
    expect(w?.changes).toEqual([
      { aspect: 'kind', before: 'receiveTask', after: 'serviceTask' },
      { aspect: 'message', before: 'Approved', after: null },
      { aspect: 'correlationKey', before: 'variable caseId', after: null },
      { aspect: 'handler', before: null, after: 'w (job)' },
    ]);
  });

  test('two different processes are not compared', async () => {
    const from = await model();
    const to = await model({ process: 'q' });
    expect(() => diffModels(from, to)).toThrow(DiffRefused);
    expect(() => diffModels(from, to)).toThrow(/different processes \(p and q\)/);
  });
});
