/**
 * The walk forward from where an instance's tokens stand (bpmn/reachable.ts)
 * and the handlers a new app drops that those tokens can still reach
 * (operations/unreached-handlers.ts), on small inline models: flows,
 * boundary events, subprocesses (in, out, their boundaries), event
 * subprocesses, loops, a failed job's retry, a multi-instance body.
 */
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { reachableElements, type WalkStart } from '../../functions/src/bpmn/reachable';
import { unreachedHandlers } from '../../functions/src/operations/unreached-handlers';

const xml = (body: string, extra = ''): string => `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="urn:test">
  <bpmn:message id="m" name="Go" />${extra}
  <bpmn:process id="p" isExecutable="true">${body}</bpmn:process>
</bpmn:definitions>`;
const task = (id: string): string => `<bpmn:serviceTask id="${id}" inbox:async="true" />`;
const flow = (from: string, to: string): string =>
  `<bpmn:sequenceFlow id="${from}-${to}" sourceRef="${from}" targetRef="${to}" />`;
const wait = (id: string): string => `<bpmn:receiveTask id="${id}" messageRef="m" inbox:correlationKey="k" />`;

/** start → a → w (a message wait, a timer on it → nudge) → b → end. */
const line = (): Promise<ProcessModel> =>
  parseProcessModel(
    xml(`<bpmn:startEvent id="s" />${task('a')}${wait('w')}
      <bpmn:boundaryEvent id="t" attachedToRef="w" cancelActivity="false">
        <bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>
      </bpmn:boundaryEvent>${task('nudge')}<bpmn:endEvent id="n" />${task('b')}<bpmn:endEvent id="e" />
      ${flow('s', 'a')}${flow('a', 'w')}${flow('w', 'b')}${flow('b', 'e')}${flow('t', 'nudge')}${flow('nudge', 'n')}`),
  );

const at = (elementId: string, self = false): WalkStart => ({ elementId, self });
const tasksOf = (m: ProcessModel, starts: WalkStart[]): string[] =>
  [...reachableElements(m, starts)].filter((id) => m.nodes[id]?.kind === 'serviceTask').sort();

describe('reachableElements', () => {
  test('forward along the flows and into the boundary events, never back', async () => {
    const m = await line();
    expect(tasksOf(m, [at('w')])).toEqual(['b', 'nudge']);
    expect(tasksOf(m, [at('a')])).toEqual(['b', 'nudge']);
    expect(tasksOf(m, [at('b')])).toEqual([]);
    // A token at a task whose job failed: its retry runs the task again.
    expect(tasksOf(m, [at('a', true)])).toEqual(['a', 'b', 'nudge']);
    expect(tasksOf(m, [at('b'), at('w')])).toEqual(['b', 'nudge']);
    expect(tasksOf(m, [at('gone')])).toEqual([]);
  });

  test('a loop brings a token back to a task it has passed', async () => {
    const m = await parseProcessModel(
      xml(`<bpmn:startEvent id="s" />${task('a')}${task('b')}
        <bpmn:exclusiveGateway id="g" default="g-e" /><bpmn:endEvent id="e" />
        ${flow('s', 'a')}${flow('a', 'b')}${flow('b', 'g')}${flow('g', 'e')}
        <bpmn:sequenceFlow id="again" sourceRef="g" targetRef="a"><bpmn:conditionExpression>\${again == true}</bpmn:conditionExpression></bpmn:sequenceFlow>`),
    );
    expect(tasksOf(m, [at('b')])).toEqual(['a', 'b']);
  });

  test('a subprocess: in from outside; out by its flows and boundaries from inside; its event subprocess', async () => {
    const m = await parseProcessModel(
      xml(
        `<bpmn:startEvent id="s" />${task('before')}
        <bpmn:subProcess id="sub">
          <bpmn:startEvent id="ss" />${task('inner1')}${wait('iw')}${task('inner2')}<bpmn:endEvent id="se" />
          ${flow('ss', 'inner1')}${flow('inner1', 'iw')}${flow('iw', 'inner2')}${flow('inner2', 'se')}
          <bpmn:subProcess id="esp" triggeredByEvent="true">
            <bpmn:startEvent id="es" isInterrupting="false"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent>
            ${task('onEvent')}<bpmn:endEvent id="ee" />${flow('es', 'onEvent')}${flow('onEvent', 'ee')}
          </bpmn:subProcess>
        </bpmn:subProcess>
        <bpmn:boundaryEvent id="late" attachedToRef="sub">
          <bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>
        </bpmn:boundaryEvent>${task('escalate')}<bpmn:endEvent id="le" />
        ${task('after')}<bpmn:endEvent id="e" />
        ${flow('s', 'before')}${flow('before', 'sub')}${flow('sub', 'after')}${flow('after', 'e')}
        ${flow('late', 'escalate')}${flow('escalate', 'le')}`,
      ),
    );
    // From before the subprocess: everything after, inside and its boundary's branch.
    expect(tasksOf(m, [at('before')])).toEqual(['after', 'escalate', 'inner1', 'inner2', 'onEvent']);
    // From inside: what is left inside, the event subprocess, and the ways out; not inner1, nor before.
    expect(tasksOf(m, [at('iw'), at('sub')])).toEqual(['after', 'escalate', 'inner2', 'onEvent']);
    expect(tasksOf(m, [at('after')])).toEqual([]);
  });
});

test('a multi-instance subprocess: its items run its body, so a token waiting for them reaches the tasks inside', async () => {
  const m = await parseProcessModel(
    xml(`<bpmn:startEvent id="s" />
      <bpmn:subProcess id="each">
        <bpmn:multiInstanceLoopCharacteristics inbox:collection="parts" inbox:elementVariable="part" />
        <bpmn:startEvent id="is" />${task('inspect')}<bpmn:endEvent id="ie" />${flow('is', 'inspect')}${flow('inspect', 'ie')}
      </bpmn:subProcess>${task('report')}<bpmn:endEvent id="e" />
      ${flow('s', 'each')}${flow('each', 'report')}${flow('report', 'e')}`),
  );
  expect(tasksOf(m, [at('each', true)])).toEqual(['inspect', 'report']);
  expect(tasksOf(m, [at('s')])).toEqual(['inspect', 'report']);
});

describe('unreachedHandlers', () => {
  test('names each handler the new app lacks, with the instances that could reach it', async () => {
    const m = await line();
    const groups = [
      { processVersion: m.version, starts: [at('w')], instances: 3 },
      { processVersion: m.version, starts: [at('a', true)], instances: 1 },
      { processVersion: m.version, starts: [at('b')], instances: 5 },
    ];
    expect(unreachedHandlers(m, groups, new Set(['a', 'nudge']))).toEqual([
      { handler: 'b', processKey: 'p', processVersion: m.version, activities: ['b'], instances: 4 },
    ]);
    // The failed job's retry needs a; the waiting instances are past it.
    expect(unreachedHandlers(m, groups, new Set(['b', 'nudge']))).toEqual([
      { handler: 'a', processKey: 'p', processVersion: m.version, activities: ['a'], instances: 1 },
    ]);
    expect(unreachedHandlers(m, groups, new Set(['a', 'b', 'nudge']))).toEqual([]);
  });

  test('a task with a zeebe:taskDefinition is looked up by its type, as runJob does', async () => {
    const m = await parseProcessModel(
      xml(`<bpmn:startEvent id="s" />${wait('w')}
        <bpmn:serviceTask id="charge"><bpmn:extensionElements><zeebe:taskDefinition type="payments" /></bpmn:extensionElements></bpmn:serviceTask>
        <bpmn:endEvent id="e" />${flow('s', 'w')}${flow('w', 'charge')}${flow('charge', 'e')}`),
    );
    const groups = [{ processVersion: m.version, starts: [at('w')], instances: 2 }];
    expect(unreachedHandlers(m, groups, new Set(['payments']))).toEqual([]);
    expect(unreachedHandlers(m, groups, new Set(['charge']))).toEqual([]);
    expect(unreachedHandlers(m, groups, new Set())).toEqual([
      { handler: 'payments', processKey: 'p', processVersion: m.version, activities: ['charge'], instances: 2 },
    ]);
  });
});
