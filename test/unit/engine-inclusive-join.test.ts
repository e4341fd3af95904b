/**
 * The inclusive join's activation rule (BPMN 2.0, 13.3.2), two cases the
 * differential test against bpmn-engine found: a token blocks the join only
 * by a path to a missing flow that passes neither the join nor a node that
 * leads to a flow already filled; a token at a fork is on its way down one
 * of its flows.
 */
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const timer = '<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>';

test('a join inside a loop does not wait for a token that could reach its missing flow only round the loop', async () => {
  // start → again → u1 → fork → [ orF → pass → orJ | orF -(f0)→ wait (timer) → orJ ] and [ u2 ] → andJ → loop? → again | end
  const model = await parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element('exclusiveGateway', 'again') +
        element('userTask', 'u1') +
        element('parallelGateway', 'fork') +
        element('inclusiveGateway', 'orF', 'default="toPass"') +
        element('task', 'pass') +
        element('intermediateCatchEvent', 'wait', '', timer) +
        element('inclusiveGateway', 'orJ') +
        element('userTask', 'u2') +
        element('parallelGateway', 'andJ') +
        element('exclusiveGateway', 'loop', 'default="out"') +
        element('endEvent', 'end') +
        chain('start', 'again', 'u1', 'fork', 'orF') +
        sequenceFlow('toPass', 'orF', 'pass') +
        sequenceFlow('toWait', 'orF', 'wait', 'f0 == true') +
        chain('pass', 'orJ') +
        chain('wait', 'orJ') +
        chain('fork', 'u2', 'andJ') +
        chain('orJ', 'andJ', 'loop') +
        sequenceFlow('back', 'loop', 'again', 'f1 == true') +
        sequenceFlow('out', 'loop', 'end'),
    ),
  );
  const sim = new CoreSim(model);
  sim.start({ f0: false, f1: false });
  const t = sim.completeTask('u1');
  // The pass branch went through the join at once: u2's token reaches the timer only by coming round again.
  expect(t.executions.some((e) => e.activityId === 'andJ' && e.status === 'WAITING_JOIN')).toBe(true);
  expect(sim.tokenAt('u2').status).toBe('WAITING_USER');
  expect(sim.completeTask('u2').instance.status).toBe('COMPLETED');
});

test('a join waits for a token a fork sent down another of its branches in the same step', async () => {
  // start → orF → [ a | b (f1) | c (default) ] → orJ → end: a and b are taken, and the join goes on once.
  const model = await parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element('inclusiveGateway', 'orF', 'default="toC"') +
        element('task', 'a') +
        element('task', 'b') +
        element('userTask', 'c') +
        element('inclusiveGateway', 'orJ') +
        element('endEvent', 'end') +
        chain('start', 'orF') +
        sequenceFlow('toA', 'orF', 'a') +
        sequenceFlow('toB', 'orF', 'b', 'f1 == true') +
        sequenceFlow('toC', 'orF', 'c') +
        chain('a', 'orJ') +
        chain('b', 'orJ') +
        chain('c', 'orJ') +
        chain('orJ', 'end'),
    ),
  );
  const t = new CoreSim(model).start({ f1: true });
  expect(t.instance.status).toBe('COMPLETED');
  expect(t.executions.filter((e) => e.activityId === 'end' && e.status === 'ENDED')).toHaveLength(1);
});
