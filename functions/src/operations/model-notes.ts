/**
 * What each element of a loaded model runs, in the words and spellings of
 * the model: the handler a job looks up (its `zeebe:taskDefinition` type or
 * its id), the key a message wait waits under (`=order.id` as written), the
 * conditions, mappings, timers and collections in FEEL or the engine's own
 * language. The console shows it beside the diagram and `inbox model check
 * --elements` under each file, so a modeller sees how the engine read what
 * Camunda Modeler wrote. Pure.
 */
import type { FlowNode, IoMapping, Mapping, MultiInstance, ProcessModel, TimerDefinition } from '../bpmn/model';

/** One element and what it runs; elements with nothing to say are left out. */
export interface ModelNote {
  readonly id: string;
  /** The engine's kind (`serviceTask`, `messageCatchEvent`, `sequenceFlow`). */
  readonly kind: string;
  readonly name: string | null;
  readonly notes: readonly string[];
}

const written = (m: Mapping): string =>
  `${m.target} ← ${m.expression === undefined ? JSON.stringify(m.value ?? '') : `=${m.expression}`}`;

function ioNotes(io: IoMapping | undefined): string[] {
  if (io === undefined) return [];
  return [
    ...(io.inputs.length === 0 ? [] : [`inputs: ${io.inputs.map(written).join(', ')}`]),
    ...(io.outputs.length === 0 ? [] : [`outputs: ${io.outputs.map(written).join(', ')}`]),
  ];
}

const timerNote = (timer: TimerDefinition): string =>
  `${timer.type} ${timer.text}${timer.variable !== null && timer.value !== null ? ` (default ${timer.value})` : ''}`;

function keyNote(
  messageName: string,
  source: { correlationVariable: string | null; correlationExpression?: string; correlationKeyText?: string },
): string {
  // A Camunda 8 key as the modeller wrote it; the engine's reading follows from it (=name is the variable name).
  const key =
    source.correlationKeyText !== undefined
      ? `${source.correlationKeyText} (zeebe:subscription)`
      : source.correlationExpression !== undefined
        ? `=${source.correlationExpression}`
        : source.correlationVariable === null
          ? 'the business key'
          : `variable ${source.correlationVariable}`;
  return `waits for ${messageName}, key ${key}`;
}

function loopNotes(loop: MultiInstance | undefined): string[] {
  if (loop === undefined) return [];
  const mode = loop.sequential ? 'sequential' : 'parallel';
  const over =
    loop.collectionExpression !== undefined
      ? ` over =${loop.collectionExpression} as ${loop.elementVariable}`
      : loop.collection !== null
        ? ` over variable ${loop.collection} as ${loop.elementVariable}`
        : loop.cardinality === null
          ? ''
          : 'literal' in loop.cardinality
            ? `, ${loop.cardinality.literal} times`
            : `, \${${loop.cardinality.variable}} times`;
  const element =
    loop.outputElementExpression === undefined ? (loop.outputElement ?? '') : `=${loop.outputElementExpression}`;
  const output = loop.outputCollection === null ? '' : `, collects ${element} into ${loop.outputCollection}`;
  const until = loop.completionConditionText === null ? '' : `, until ${loop.completionConditionText.trim()}`;
  return [`${mode}${over}${output}${until}`];
}

function nodeNotes(node: FlowNode): string[] {
  const notes: string[] = [];
  switch (node.kind) {
    case 'serviceTask':
    case 'sendTask':
    case 'businessRuleTask':
      if (node.job !== undefined)
        notes.push(
          `handler of type ${node.job.type} (zeebe:taskDefinition${node.job.retries === undefined ? '' : `, retries ${node.job.retries}`})`,
        );
      else notes.push(node.async ? `async, handler ${node.id}` : `synchronous, handler ${node.id}`);
      if (node.messageName !== undefined) notes.push(`publishes ${node.messageName}`);
      break;
    case 'messageThrowEvent':
    case 'messageEndEvent':
      if (node.job !== undefined) notes.push(`handler of type ${node.job.type} (zeebe:taskDefinition)`);
      if (node.messageName !== null) notes.push(`publishes ${node.messageName}`);
      break;
    case 'messageCatchEvent':
    case 'receiveTask':
    case 'boundaryMessage':
      notes.push(keyNote(node.messageName, node));
      break;
    case 'messageStartEvent':
      notes.push(
        `started by ${node.messageName}, key ${node.correlationVariable === null ? 'the business key' : `into variable ${node.correlationVariable}`}${node.correlationKeyText === undefined ? '' : ` (zeebe:subscription ${node.correlationKeyText})`}`,
      );
      break;
    case 'timerCatchEvent':
    case 'boundaryTimer':
    case 'timerStartEvent':
      notes.push(timerNote(node.timer));
      break;
    case 'userTask': {
      const who = [
        node.assignee === null ? null : `assignee ${node.assignee}`,
        node.candidateGroups.length === 0 ? null : `groups ${node.candidateGroups.join(', ')}`,
        node.candidateUsers === undefined ? null : `users ${node.candidateUsers.join(', ')}`,
        node.formKey === null ? null : `form ${node.formKey}`,
      ].filter((part) => part !== null);
      if (who.length > 0) notes.push(who.join('; '));
      break;
    }
    case 'callActivity':
      notes.push(
        `calls ${node.calledProcess}${node.propagateChildVariables === false ? ', no variables back but its outputs' : ''}`,
      );
      break;
    case 'eventSubProcess':
      if (node.trigger.kind === 'message') notes.push(keyNote(node.trigger.messageName, node.trigger));
      if (node.trigger.kind === 'timer') notes.push(timerNote(node.trigger.timer));
      break;
    case 'boundaryError':
    case 'boundaryEscalation':
    case 'endEvent':
    case 'errorEndEvent':
    case 'escalationEndEvent':
    case 'escalationThrowEvent':
    case 'eventBasedGateway':
    case 'exclusiveGateway':
    case 'inclusiveGateway':
    case 'parallelGateway':
    case 'passThrough':
    case 'startEvent':
    case 'subProcess':
      break;
  }
  if ('job' in node && node.job.headers !== undefined)
    notes.push(
      `headers: ${Object.entries(node.job.headers)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`,
    );
  notes.push(...ioNotes(node.io), ...loopNotes(node.loop));
  if (node.properties !== undefined)
    notes.push(
      `properties: ${Object.entries(node.properties)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`,
    );
  return notes;
}

/** The notes of a model's elements, nodes in model order, then the flows with a condition. */
export function modelNotes(model: ProcessModel): ModelNote[] {
  const nodes = Object.values(model.nodes).flatMap((node) => {
    const notes = nodeNotes(node);
    return notes.length === 0 ? [] : [{ id: node.id, kind: node.kind, name: node.name, notes }];
  });
  const flows = Object.values(model.flows).flatMap((flow) =>
    flow.conditionText === null
      ? []
      : [{ id: flow.id, kind: 'sequenceFlow', name: null, notes: [`condition ${flow.conditionText.trim()}`] }],
  );
  return [...nodes, ...flows];
}
