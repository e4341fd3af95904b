/**
 * The sequence flows of a process: each with its id (its own, or one
 * derived from the document for a flow written without one), its source
 * and target, and its condition. Pure, as the rest of the parser.
 */
import { errorMessage } from '../core/errors';
import { parseAnyCondition } from './condition';
import { ModelError, type SequenceFlow } from './model';
import { type Element, isElement, text } from './read';

/** The `language` values a condition may name: FEEL's (Camunda 8 writes none). */
const FEEL_LANGUAGES: ReadonlySet<string> = new Set(['feel', 'http://www.omg.org/spec/feel/20140401']);

/** The ids of a flow's source and target, or the refusal naming the flow (by its id, when it has one). */
function endsOf(element: Element, nodes: ReadonlyMap<string, unknown>): { sourceId: string; targetId: string } {
  const end = (property: 'sourceRef' | 'targetRef'): string => {
    const ref = element[property];
    const refId = isElement(ref) ? text(ref, 'id') : null;
    if (refId === null || !nodes.has(refId)) {
      const what = `dangling flow: ${property} ${refId === null ? 'is missing' : `"${refId}" is not a flow node of this process`}`;
      const id = text(element, 'id');
      throw new ModelError(id === null ? `${what} (a sequenceFlow without an id)` : what, id);
    }
    return refId;
  };
  return { sourceId: end('sourceRef'), targetId: end('targetRef') };
}

/**
 * The id of every sequence flow: its own, or, for one without an `id`
 * (BPMN's schema allows it, and a flow is never named by another element:
 * a gateway's `default` needs an id to name one), one derived from the
 * document: `SOURCE->TARGET`, and `SOURCE->TARGET/2`, `/3`… for the second
 * and later id-less flows between the same two elements, in document order.
 * It is what incidents, `inbox explain`, the console and a join's stored
 * tokens (`arrivedBy`) show for the flow. The same document always gives
 * the same ids (every function, every deploy of the file); `>` and `/` are
 * in no XML id, so a derived id is never an element's own, whatever the
 * model's other ids, nor an item body's (`#in`, `#out`). Editing the model
 * may renumber: a flow added between the same pair before another.
 */
function flowIds(
  flowElements: readonly Element[],
  nodes: ReadonlyMap<string, unknown>,
): Map<Element, { id: string; sourceId: string; targetId: string }> {
  const ids = new Map<Element, { id: string; sourceId: string; targetId: string }>();
  const seen = new Map<string, number>();
  for (const element of flowElements) {
    const ends = endsOf(element, nodes);
    const own = text(element, 'id');
    if (own !== null) {
      ids.set(element, { id: own, ...ends });
      continue;
    }
    const pair = `${ends.sourceId}->${ends.targetId}`;
    const n = (seen.get(pair) ?? 0) + 1;
    seen.set(pair, n);
    ids.set(element, { id: n === 1 ? pair : `${pair}/${n}`, ...ends });
  }
  return ids;
}

function toFlow(
  element: Element,
  { id, sourceId, targetId }: { id: string; sourceId: string; targetId: string },
): SequenceFlow {
  const expression = element.conditionExpression;
  if (!isElement(expression)) return { id, sourceId, targetId, condition: null, conditionText: null };
  const conditionText = typeof expression.body === 'string' ? expression.body : '';
  const language = text(expression, 'language');
  if (language !== null && !FEEL_LANGUAGES.has(language.toLowerCase()))
    throw new ModelError(
      `a condition in language "${language}": write it in FEEL (=…) or the engine's own condition language, without a language`,
      id,
    );
  try {
    return { id, sourceId, targetId, condition: parseAnyCondition(conditionText), conditionText };
  } catch (error) {
    throw new ModelError(errorMessage(error), id);
  }
}

/** The flows of `flowElements` (in document order), their ends among `nodes`; a ModelError names the flow it refuses. */
export function sequenceFlows(flowElements: readonly Element[], nodes: ReadonlyMap<string, unknown>): SequenceFlow[] {
  return [...flowIds(flowElements, nodes)].map(([element, ids]) => toFlow(element, ids));
}
