/**
 * What changed between two versions of one process: the elements added,
 * removed and changed (matched by id), and for a changed one which of what
 * the engine runs changed (its kind, a wait's message or key, a job's
 * handler, a timer, an assignment, a called process, its multi-instance
 * characteristics, its flows), each with its value before and after; the
 * sequence flows added, removed and changed (their ends and condition).
 * `inbox model diff` and the deploy's impact check print it. Pure: two
 * models in, plain JSON out.
 */
import {
  type FlowNode,
  handlerKeyOf,
  type IoMapping,
  type Mapping,
  type MultiInstance,
  type ProcessModel,
  type SequenceFlow,
  type TimerDefinition,
} from './model';

/** What of an element the diff compares, in the order it reports them. */
export const ASPECTS = [
  'kind',
  'name',
  'message',
  'correlationKey',
  'handler',
  'timer',
  'assignment',
  'calledProcess',
  'multiInstance',
  'attachedTo',
  'code',
  'ioMapping',
  'scope',
  'defaultFlow',
  'incoming',
  'outgoing',
] as const;
export type Aspect = (typeof ASPECTS)[number];

/** One aspect of an element that differs: its value before and after, as words (null: the element has none). */
export interface AspectChange {
  readonly aspect: Aspect;
  readonly before: string | null;
  readonly after: string | null;
}

/** An element as the diff names it. */
export interface ElementRef {
  readonly id: string;
  readonly kind: string;
  readonly name: string | null;
}

/** An element in both versions that runs differently; `kind` is the new one (a change of kind is one of `changes`). */
export interface ChangedElement extends ElementRef {
  readonly changes: readonly AspectChange[];
}

export interface FlowRef {
  readonly id: string;
  readonly sourceId: string;
  readonly targetId: string;
  /** The condition as written; null: unconditional. */
  readonly condition: string | null;
}

export interface ChangedFlow {
  readonly id: string;
  readonly changes: readonly {
    readonly aspect: 'source' | 'target' | 'condition';
    readonly before: string | null;
    readonly after: string | null;
  }[];
}

/** The difference of two versions of one process; `identical` when neither elements nor flows differ. */
export interface ModelDiff {
  readonly processKey: string;
  readonly fromVersion: string;
  readonly toVersion: string;
  readonly identical: boolean;
  readonly added: readonly ElementRef[];
  readonly removed: readonly ElementRef[];
  readonly changed: readonly ChangedElement[];
  readonly flowsAdded: readonly FlowRef[];
  readonly flowsRemoved: readonly FlowRef[];
  readonly flowsChanged: readonly ChangedFlow[];
}

/** Two models of different processes are not compared: the caller names the files. */
export class DiffRefused extends Error {
  override readonly name = 'DiffRefused';
}

const kindOf = (node: FlowNode): string =>
  node.kind === 'passThrough'
    ? `passThrough (${node.element})`
    : node.kind === 'endEvent' && node.terminate
      ? 'endEvent (terminate)'
      : node.kind === 'eventSubProcess'
        ? `eventSubProcess (${node.trigger.kind}${node.interrupting ? '' : ', non-interrupting'})`
        : node.kind;

const written = (m: Mapping): string =>
  `${m.target}←${m.expression === undefined ? JSON.stringify(m.value ?? '') : `=${m.expression}`}`;

const ioWords = (io: IoMapping | undefined): string | null =>
  io === undefined || (io.inputs.length === 0 && io.outputs.length === 0)
    ? null
    : `inputs ${io.inputs.map(written).join(', ') || '-'}; outputs ${io.outputs.map(written).join(', ') || '-'}`;

const timerWords = (timer: TimerDefinition): string =>
  `${timer.type} ${timer.text}${timer.variable !== null && timer.value !== null ? ` (default ${timer.value})` : ''}`;

interface KeySource {
  readonly correlationVariable: string | null;
  readonly correlationExpression?: string;
  readonly correlationKeyText?: string;
}
const keyWords = (s: KeySource): string =>
  s.correlationKeyText ??
  (s.correlationExpression !== undefined
    ? `=${s.correlationExpression}`
    : s.correlationVariable === null
      ? 'the business key'
      : `variable ${s.correlationVariable}`);

function loopWords(loop: MultiInstance | undefined): string | null {
  if (loop === undefined) return null;
  const over =
    loop.collectionExpression !== undefined
      ? `=${loop.collectionExpression}`
      : loop.collection !== null
        ? `variable ${loop.collection}`
        : loop.cardinality === null
          ? '-'
          : 'literal' in loop.cardinality
            ? `${loop.cardinality.literal} times`
            : `variable ${loop.cardinality.variable} times`;
  const out =
    loop.outputCollection === null
      ? ''
      : `, output ${loop.outputCollection}←${loop.outputElementExpression !== undefined ? `=${loop.outputElementExpression}` : (loop.outputElement ?? '-')}`;
  const until = loop.completionConditionText === null ? '' : `, until ${loop.completionConditionText}`;
  return `${loop.sequential ? 'sequential' : 'parallel'} over ${over} as ${loop.elementVariable}${out}${until}`;
}

function messageWords(node: FlowNode): string | null {
  if (node.kind === 'eventSubProcess') return node.trigger.kind === 'message' ? node.trigger.messageName : null;
  if (node.kind === 'messageThrowEvent' || node.kind === 'messageEndEvent')
    return node.messageName ?? '(none: its worker publishes)';
  return 'messageName' in node && typeof node.messageName === 'string' ? node.messageName : null;
}

function keyOf(node: FlowNode): string | null {
  if (node.kind === 'eventSubProcess') return node.trigger.kind === 'message' ? keyWords(node.trigger) : null;
  return 'correlationVariable' in node ? keyWords(node) : null;
}

function handlerWords(node: FlowNode): string | null {
  if (node.kind === 'serviceTask' || node.kind === 'sendTask' || node.kind === 'businessRuleTask') {
    const retries = node.job?.retries === undefined ? '' : `, retries ${node.job.retries}`;
    return `${handlerKeyOf(node)} (${node.async ? 'job' : 'in the transaction'}${retries})`;
  }
  if (node.kind === 'messageThrowEvent' || node.kind === 'messageEndEvent')
    return node.job === undefined ? `${node.id} (the system's publish)` : `${node.job.type} (job)`;
  return null;
}

function timerOf(node: FlowNode): string | null {
  if (node.kind === 'eventSubProcess') return node.trigger.kind === 'timer' ? timerWords(node.trigger.timer) : null;
  return 'timer' in node ? timerWords(node.timer) : null;
}

function assignmentOf(node: FlowNode): string | null {
  if (node.kind !== 'userTask') return null;
  const parts = [
    `assignee ${node.assignee ?? '-'}`,
    `candidateGroups ${node.candidateGroups.join(',') || '-'}`,
    ...(node.candidateUsers === undefined ? [] : [`candidateUsers ${node.candidateUsers.join(',') || '-'}`]),
    `formKey ${node.formKey ?? '-'}`,
  ];
  return parts.join('; ');
}

function attachedOf(node: FlowNode): string | null {
  if (!('attachedToId' in node)) return null;
  return `${node.attachedToId}${'cancelActivity' in node && !node.cancelActivity ? ' (non-interrupting)' : ''}`;
}

function codeOf(node: FlowNode): string | null {
  const attached = 'attachedToId' in node;
  if ('errorCode' in node) return node.errorCode ?? (attached ? '(every code)' : null);
  if ('escalationCode' in node) return node.escalationCode ?? (attached ? '(every code)' : null);
  return null;
}

/** A node's flows in words: `flow→target` (outgoing) or `source→flow` (incoming), sorted. */
const flowsWords = (ids: readonly string[], flows: ProcessModel['flows'], outgoing: boolean): string | null => {
  if (ids.length === 0) return null;
  return ids
    .map((id) => {
      const flow = Object.hasOwn(flows, id) ? flows[id] : undefined;
      return outgoing ? `${id}→${flow?.targetId ?? '?'}` : `${flow?.sourceId ?? '?'}→${id}`;
    })
    .sort()
    .join(', ');
};

/** Every aspect of a node in words; null where it has none. */
function aspectsOf(node: FlowNode, model: ProcessModel): Record<Aspect, string | null> {
  return {
    kind: kindOf(node),
    name: node.name,
    message: messageWords(node),
    correlationKey: keyOf(node),
    handler: handlerWords(node),
    timer: timerOf(node),
    assignment: assignmentOf(node),
    calledProcess: node.kind === 'callActivity' ? node.calledProcess : null,
    multiInstance: loopWords(node.loop),
    attachedTo: attachedOf(node),
    code: codeOf(node),
    ioMapping: ioWords(node.io),
    scope: node.scope ?? null,
    defaultFlow: node.kind === 'exclusiveGateway' || node.kind === 'inclusiveGateway' ? node.defaultFlowId : null,
    incoming: flowsWords(node.incoming, model.flows, false),
    outgoing: flowsWords(node.outgoing, model.flows, true),
  };
}

const refOf = (node: FlowNode): ElementRef => ({ id: node.id, kind: kindOf(node), name: node.name });
const flowRef = (flow: SequenceFlow): FlowRef => ({
  id: flow.id,
  sourceId: flow.sourceId,
  targetId: flow.targetId,
  condition: flow.conditionText,
});

const byId = <T extends { readonly id: string }>(a: T, b: T): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const own = <T>(record: Readonly<Record<string, T>>, id: string): T | undefined =>
  Object.hasOwn(record, id) ? record[id] : undefined;

/** The changes of one element kept in both versions; empty when it runs the same. */
export function elementChanges(
  before: FlowNode,
  from: ProcessModel,
  after: FlowNode,
  to: ProcessModel,
): AspectChange[] {
  const a = aspectsOf(before, from);
  const b = aspectsOf(after, to);
  return ASPECTS.filter((aspect) => a[aspect] !== b[aspect]).map((aspect) => ({
    aspect,
    before: a[aspect],
    after: b[aspect],
  }));
}

/**
 * The difference from `from` to `to`, two versions of the same process
 * (their keys must match: DiffRefused otherwise). Elements and flows are
 * matched by id: a renamed element is one removed and one added. Lists
 * sorted by id.
 */
export function diffModels(from: ProcessModel, to: ProcessModel): ModelDiff {
  if (from.key !== to.key)
    throw new DiffRefused(
      `the two models are different processes (${from.key} and ${to.key}): compare two versions of the same process`,
    );
  const added: ElementRef[] = [];
  const removed: ElementRef[] = [];
  const changed: ChangedElement[] = [];
  for (const node of Object.values(to.nodes)) if (own(from.nodes, node.id) === undefined) added.push(refOf(node));
  for (const node of Object.values(from.nodes)) {
    const next = own(to.nodes, node.id);
    if (next === undefined) {
      removed.push(refOf(node));
      continue;
    }
    const changes = elementChanges(node, from, next, to);
    if (changes.length > 0) changed.push({ ...refOf(next), changes });
  }
  const flowsAdded = Object.values(to.flows)
    .filter((f) => own(from.flows, f.id) === undefined)
    .map(flowRef);
  const flowsRemoved: FlowRef[] = [];
  const flowsChanged: ChangedFlow[] = [];
  for (const flow of Object.values(from.flows)) {
    const next = own(to.flows, flow.id);
    if (next === undefined) {
      flowsRemoved.push(flowRef(flow));
      continue;
    }
    const changes = [
      { aspect: 'source' as const, before: flow.sourceId, after: next.sourceId },
      { aspect: 'target' as const, before: flow.targetId, after: next.targetId },
      { aspect: 'condition' as const, before: flow.conditionText, after: next.conditionText },
    ].filter((c) => c.before !== c.after);
    if (changes.length > 0) flowsChanged.push({ id: flow.id, changes });
  }
  const lists = [added, removed, changed, flowsAdded, flowsRemoved, flowsChanged];
  return {
    processKey: to.key,
    fromVersion: from.version,
    toVersion: to.version,
    identical: lists.every((l) => l.length === 0),
    added: added.sort(byId),
    removed: removed.sort(byId),
    changed: changed.sort(byId),
    flowsAdded: flowsAdded.sort(byId),
    flowsRemoved: flowsRemoved.sort(byId),
    flowsChanged: flowsChanged.sort(byId),
  };
}

/** The ids of the elements a diff removed or changed: where a waiting instance may be touched. */
export const touchedElements = (diff: ModelDiff): string[] => [
  ...diff.removed.map((e) => e.id),
  ...diff.changed.map((e) => e.id),
];
