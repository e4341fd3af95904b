/**
 * The model an item of a multi-instance activity runs: a start event, the
 * activity alone (without its multi-instance characteristics and boundary
 * events, which stay with the caller's token) and everything drawn inside it,
 * and an end event. Pure; the engine registers one per multi-instance
 * activity under {@link itemBodyKey}.
 */
import type { FlowNode, IoMapping, ProcessModel, SequenceFlow } from './model';

/** Ids no BPMN element can have (`#` is not allowed in an XML id): the body's own start and end, and their flows. */
const START = '#start';
const END = '#end';
const IN = '#in';
const OUT = '#out';

/** The process key of the items of `activityId` in `processKey`: `PROCESS#ACTIVITY`. */
export const itemBodyKey = (processKey: string, activityId: string): string => `${processKey}#${activityId}`;

/** The process key an item body belongs to (its caller's model), or the key itself for a model of its own. */
export const modelKeyOf = (processKey: string): string => processKey.split('#')[0] ?? processKey;

/** Whether `node` is drawn inside `scopeId`, at any depth. */
function inside(model: ProcessModel, node: FlowNode, scopeId: string): boolean {
  for (let scope = node.scope, depth = 0; scope !== undefined && depth < 100; depth++) {
    if (scope === scopeId) return true;
    scope = model.nodes[scope]?.scope;
  }
  return false;
}

/** The variable an item's FEEL output element is kept in when the item ends (store/items.ts collects it). */
export const ITEM_OUTPUT = 'inboxItemOutput';

/**
 * A FEEL `outputElement` (Camunda 8's `zeebe:loopCharacteristics`) is
 * evaluated as the item ends, by an output of the item's end event, so a
 * failure stops the item with an incident instead of collecting a null.
 */
function outputOf(activity: FlowNode): { io?: IoMapping } {
  const expression = activity.loop?.outputElementExpression;
  return expression === undefined ? {} : { io: { inputs: [], outputs: [{ target: ITEM_OUTPUT, expression }] } };
}

export function itemBodyModel(model: ProcessModel, activityId: string): ProcessModel {
  const activity = model.nodes[activityId];
  if (activity === undefined) throw new Error(`model ${model.key} has no activity ${activityId}`);
  const plain: Record<string, unknown> = { ...activity };
  delete plain.loop;
  delete plain.scope;
  const body = {
    ...plain,
    incoming: [IN],
    outgoing: [OUT],
    ...('boundaryEventIds' in plain ? { boundaryEventIds: [] } : {}),
  } as unknown as FlowNode;
  const within = Object.values(model.nodes).filter((n) => inside(model, n, activityId));
  const ids = new Set(within.map((n) => n.id));
  const flows: SequenceFlow[] = [
    { id: IN, sourceId: START, targetId: activityId, condition: null, conditionText: null },
    { id: OUT, sourceId: activityId, targetId: END, condition: null, conditionText: null },
    ...Object.values(model.flows).filter((f) => ids.has(f.sourceId)),
  ];
  const nodes: FlowNode[] = [
    { kind: 'startEvent', id: START, name: null, incoming: [], outgoing: [IN] },
    body,
    ...within,
    { kind: 'endEvent', id: END, name: null, incoming: [OUT], outgoing: [], terminate: false, ...outputOf(activity) },
  ];
  return {
    key: itemBodyKey(model.key, activityId),
    name: activity.name,
    version: model.version,
    startEventId: START,
    messageStartEvents: {},
    nodes: Object.fromEntries(nodes.map((n) => [n.id, n])),
    flows: Object.fromEntries(flows.map((f) => [f.id, f])),
  };
}
