/**
 * A drawn model as BPMN XML, once for each engine. The two documents have
 * the same elements, ids and flows; they differ where the engines read
 * different things:
 *
 * - an async service task is `inbox:async="true"` for us, and calls the
 *   driver's `job` service for bpmn-engine (which keeps it waiting);
 * - a condition `f1` is our condition language (`f1 == true`) or FEEL
 *   (`=f1`), alternately, and bpmn-engine's expression
 *   `${environment.variables.v.f1}` (the driver keeps the flags in one
 *   object `v` that every scope's copy of the variables shares, as our
 *   variables belong to the instance);
 * - an inclusive join, and the exclusive gateway that merges an exclusive
 *   choice's branches (or an activity's path and its boundary events'), is
 *   a parallelGateway for bpmn-engine. Its inclusiveGateway does not join
 *   (each arriving token passes on), while its parallel join counts a flow
 *   its dead-path elimination discarded as arrived, which in a
 *   block-structured model is the inclusive join's semantics, and the
 *   exclusive merge's: one token or one discard goes on. Its exclusive
 *   gateway would pass the taken branch's token and each discarded
 *   branch's discard on, and a join after it would count the discard as
 *   that branch's arrival (known.ts, join-counts-discarded-flow). A loop's
 *   entry stays an exclusiveGateway (its back flow comes later).
 */
import { type Graph, type GraphFlow, type GraphNode, MAIN_PROCESS } from './graph';
import { ERROR_CODES, ESCALATION_CODES } from './shapes';

export type Dialect = 'ours' | 'reference';

const TIMER =
  '<bpmn:timerEventDefinition><bpmn:timeDuration xsi:type="bpmn:tFormalExpression">PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>';
const errorRef = (code: string | null | undefined): string =>
  `<bpmn:errorEventDefinition${code === null || code === undefined ? '' : ` errorRef="Error_${code}"`} />`;
const escalationRef = (code: string | null | undefined): string =>
  `<bpmn:escalationEventDefinition${code === null || code === undefined ? '' : ` escalationRef="Escalation_${code}"`} />`;

/**
 * A multi-instance activity's characteristics. The completion conditions
 * read: `done`, our item's variable (its job's result, its completion's
 * variables), which bpmn-engine sees as the item's output (a service's
 * callback arguments, a signal's message); `second`, our count, which
 * bpmn-engine's expression works out from the index of the item that ended
 * (the driver's `atLeast` service); `missing`, a variable nothing sets
 * (FEEL fails on it for us; undefined, so false, for bpmn-engine).
 */
function loopXml(node: GraphNode, dialect: Dialect): string {
  const loop = node.loop;
  if (loop === undefined) return '';
  const text = (c: NonNullable<typeof loop.completion>): string => {
    if (dialect === 'ours')
      return c === 'done' ? 'done == true' : c === 'second' ? 'numberOfCompletedInstances >= 2' : '=missing';
    if (c === 'done') return node.kind === 'job' ? '${content.output[0].done}' : '${content.output.done}';
    return c === 'second' ? '${environment.services.atLeast(content.index,1)}' : '${environment.variables.v.missing}';
  };
  const completion =
    loop.completion === null
      ? ''
      : `<bpmn:completionCondition xsi:type="bpmn:tFormalExpression">${text(loop.completion)}</bpmn:completionCondition>`;
  return `<bpmn:multiInstanceLoopCharacteristics isSequential="${String(loop.sequential)}"><bpmn:loopCardinality xsi:type="bpmn:tFormalExpression">${loop.count}</bpmn:loopCardinality>${completion}</bpmn:multiInstanceLoopCharacteristics>`;
}

function element(node: GraphNode, dialect: Dialect, inner: string): string {
  const loop = loopXml(node, dialect);
  const el = (tag: string, attributes = '', content = ''): string => {
    const body = loop + content;
    return `<bpmn:${tag} id="${node.id}"${attributes}${body === '' ? ' />' : `>${body}</bpmn:${tag}>`}`;
  };
  const byDefault = node.defaultFlow === undefined ? '' : ` default="${node.defaultFlow}"`;
  switch (node.kind) {
    case 'start':
      return el('startEvent');
    case 'end':
      return el('endEvent');
    case 'errorEnd':
      return el('endEvent', '', errorRef(node.code));
    case 'terminateEnd':
      return el('endEvent', '', '<bpmn:terminateEventDefinition />');
    case 'escalationEnd':
      return el('endEvent', '', escalationRef(node.code));
    case 'user':
      return el('userTask');
    case 'job':
      return dialect === 'ours'
        ? el('serviceTask', ' inbox:async="true"')
        : el('serviceTask', ' implementation="${environment.services.job}"');
    case 'pass':
      return el('task');
    case 'timer':
      return el('intermediateCatchEvent', '', TIMER);
    case 'escalate':
      return el('intermediateThrowEvent', '', escalationRef(node.code));
    case 'xor':
      return dialect === 'reference' && node.merge === true ? el('parallelGateway') : el('exclusiveGateway', byDefault);
    case 'or':
      return el('inclusiveGateway', byDefault);
    case 'orJoin':
      return dialect === 'ours' ? el('inclusiveGateway') : el('parallelGateway');
    case 'and':
      return el('parallelGateway');
    case 'sub':
      return el('subProcess', '', inner);
    case 'call':
      return el('callActivity', ` calledElement="${node.calls ?? ''}"`);
    case 'esp':
      return el('subProcess', ' triggeredByEvent="true"', inner);
    case 'espStart':
      return el(
        'startEvent',
        node.interrupting === true ? '' : ' isInterrupting="false"',
        node.trigger === 'error' ? errorRef(node.code) : escalationRef(node.code),
      );
    case 'boundaryError':
      return el('boundaryEvent', ` attachedToRef="${node.attachedTo ?? ''}"`, errorRef(node.code));
    case 'boundaryTimer':
      return el(
        'boundaryEvent',
        ` attachedToRef="${node.attachedTo ?? ''}"${node.interrupting === true ? '' : ' cancelActivity="false"'}`,
        TIMER,
      );
    case 'boundaryEscalation':
      return el(
        'boundaryEvent',
        ` attachedToRef="${node.attachedTo ?? ''}"${node.interrupting === true ? '' : ' cancelActivity="false"'}`,
        escalationRef(node.code),
      );
  }
}

function flowXml(flow: GraphFlow, index: number, dialect: Dialect): string {
  if (flow.when === null)
    return `<bpmn:sequenceFlow id="${flow.id}" sourceRef="${flow.source}" targetRef="${flow.target}" />`;
  const text =
    dialect === 'reference'
      ? `\${environment.variables.v.${flow.when}}`
      : index % 2 === 0
        ? `${flow.when} == true`
        : `=${flow.when}`;
  return `<bpmn:sequenceFlow id="${flow.id}" sourceRef="${flow.source}" targetRef="${flow.target}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${text}</bpmn:conditionExpression></bpmn:sequenceFlow>`;
}

/** The elements and flows drawn in `scope` (null: the process level of `process`), subprocesses with their insides. */
function scopeXml(graph: Graph, scope: string | null, dialect: Dialect, process = MAIN_PROCESS): string {
  const nodes = graph.nodes
    .filter((n) => n.scope === scope && (scope !== null || n.process === process))
    .map((n) => element(n, dialect, n.kind === 'sub' || n.kind === 'esp' ? scopeXml(graph, n.id, dialect) : ''));
  const inScope = new Set(
    graph.nodes.filter((n) => n.scope === scope && (scope !== null || n.process === process)).map((n) => n.id),
  );
  const flows = graph.flows.flatMap((f, i) => (inScope.has(f.source) ? [flowXml(f, i, dialect)] : []));
  return [...nodes, ...flows].join('\n');
}

/**
 * The model as a BPMN document for `dialect`: the executable process `p`,
 * and for bpmn-engine the processes its call activities call.
 */
export function modelXml(graph: Graph, dialect: Dialect): string {
  // bpmn-engine runs the executable processes of a document and calls the others; ours loads one per document.
  const callees =
    dialect === 'reference'
      ? graph.callees
          .map(
            (c) =>
              `\n<bpmn:process id="${c}" isExecutable="false">\n${scopeXml(graph, null, dialect, c)}\n</bpmn:process>`,
          )
          .join('')
      : '';
  return documentXml(scopeXml(graph, null, dialect), MAIN_PROCESS, callees);
}

/** A called process as our engine loads it: a document of its own. */
export function calleeXml(graph: Graph, callee: string): string {
  return documentXml(scopeXml(graph, null, 'ours', callee), callee, '');
}

/** A definitions document with the errors and escalations, around the executable process `id` and `more`. */
function documentXml(body: string, id: string, more: string): string {
  const roots = [
    ...ERROR_CODES.map((c) => `<bpmn:error id="Error_${c}" errorCode="${c}" />`),
    ...ESCALATION_CODES.map((c) => `<bpmn:escalation id="Escalation_${c}" escalationCode="${c}" />`),
  ].join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:reference-test">
${roots}
<bpmn:process id="${id}" isExecutable="true">
${body}
</bpmn:process>${more}
</bpmn:definitions>`;
}
