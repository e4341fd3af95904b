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
import type { Graph, GraphFlow, GraphNode } from './draw';
import { ERROR_CODES, ESCALATION_CODES } from './shapes';

export type Dialect = 'ours' | 'reference';

const TIMER =
  '<bpmn:timerEventDefinition><bpmn:timeDuration xsi:type="bpmn:tFormalExpression">PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>';
const errorRef = (code: string | null | undefined): string =>
  `<bpmn:errorEventDefinition${code === null || code === undefined ? '' : ` errorRef="Error_${code}"`} />`;
const escalationRef = (code: string | null | undefined): string =>
  `<bpmn:escalationEventDefinition${code === null || code === undefined ? '' : ` escalationRef="Escalation_${code}"`} />`;

function element(node: GraphNode, dialect: Dialect, inner: string): string {
  const el = (tag: string, attributes = '', body = ''): string =>
    `<bpmn:${tag} id="${node.id}"${attributes}${body === '' ? ' />' : `>${body}</bpmn:${tag}>`}`;
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

/** The elements and flows drawn in `scope` (null: the process), subprocesses with their insides. */
function scopeXml(graph: Graph, scope: string | null, dialect: Dialect): string {
  const nodes = graph.nodes
    .filter((n) => n.scope === scope)
    .map((n) => element(n, dialect, n.kind === 'sub' || n.kind === 'esp' ? scopeXml(graph, n.id, dialect) : ''));
  const inScope = new Set(graph.nodes.filter((n) => n.scope === scope).map((n) => n.id));
  const flows = graph.flows.flatMap((f, i) => (inScope.has(f.source) ? [flowXml(f, i, dialect)] : []));
  return [...nodes, ...flows].join('\n');
}

/** The model as a BPMN document for `dialect`: one executable process `p`. */
export function modelXml(graph: Graph, dialect: Dialect): string {
  const roots = [
    ...ERROR_CODES.map((c) => `<bpmn:error id="Error_${c}" errorCode="${c}" />`),
    ...ESCALATION_CODES.map((c) => `<bpmn:escalation id="Escalation_${c}" escalationCode="${c}" />`),
  ].join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:reference-test">
${roots}
<bpmn:process id="p" isExecutable="true">
${scopeXml(graph, null, dialect)}
</bpmn:process>
</bpmn:definitions>`;
}
