/**
 * Reading multi-instance characteristics (`multiInstanceLoopCharacteristics`):
 * what the activity runs over (`inbox:collection`, or `loopCardinality`), the
 * item's variable, the output and the completion condition. Standard loops
 * (`standardLoopCharacteristics`) are refused. Beside parse-model.ts.
 */
import { parseAnyCondition } from './condition';
import { zeebeLoopOf } from './zeebe';
import { type Condition, ModelError, type MultiInstance } from './model';
import { type Element, isElement, text, VARIABLE_NAME } from './read';
import { errorMessage } from '../core/errors';

/** The activities a multi-instance marker may be on: each item runs the activity alone. */
export const LOOPABLE: ReadonlySet<string> = new Set([
  'bpmn:ServiceTask',
  'bpmn:SendTask',
  'bpmn:BusinessRuleTask',
  'bpmn:UserTask',
  'bpmn:ReceiveTask',
  'bpmn:Task',
  'bpmn:ManualTask',
  'bpmn:SubProcess',
  'bpmn:CallActivity',
]);

function variableName(value: string | null, attribute: string, id: string): string | null {
  if (value !== null && !VARIABLE_NAME.test(value))
    throw new ModelError(`${attribute} "${value}" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`, id);
  return value;
}

/** `loopCardinality`: a whole number, or `${variable}`. */
function cardinalityOf(loop: Element, id: string): MultiInstance['cardinality'] {
  const expression = loop.loopCardinality;
  if (!isElement(expression)) return null;
  const body = typeof expression.body === 'string' ? expression.body.trim() : '';
  if (/^[0-9]+$/.test(body)) return { literal: Number(body) };
  const variable = /^\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}$/.exec(body)?.[1];
  if (variable !== undefined) return { variable };
  throw new ModelError(`loopCardinality "${body}": write a whole number or \${variable} (a variable holding one)`, id);
}

function conditionOf(text: string | null, id: string): Condition | null {
  try {
    return text === null ? null : parseAnyCondition(text);
  } catch (error) {
    throw new ModelError(`completionCondition: ${errorMessage(error)}`, id);
  }
}

/** The multi-instance characteristics of `element` (an activity), or undefined without any; refusals name the activity. */
export function loopOf(element: Element, id: string): MultiInstance | undefined {
  const loop = element.loopCharacteristics;
  if (loop === undefined) return undefined;
  if (!isElement(loop) || loop.$type !== 'bpmn:MultiInstanceLoopCharacteristics')
    throw new ModelError(
      'a standard loop (standardLoopCharacteristics) is not run: make it a multi-instance activity over a collection, or draw the loop with a gateway',
      id,
    );
  if (!LOOPABLE.has(element.$type))
    throw new ModelError(`multi-instance characteristics on a ${element.$type.slice(5)} are not run`, id);
  const zeebe = zeebeLoopOf(loop, id);
  const condition = loop.completionCondition;
  const completionConditionText = isElement(condition) && typeof condition.body === 'string' ? condition.body : null;
  const completionCondition = conditionOf(completionConditionText, id);
  if (zeebe !== undefined) {
    if (zeebe.collection === null && zeebe.collectionExpression === undefined)
      throw new ModelError('zeebe:loopCharacteristics without inputCollection: write =list, the list it runs over', id);
    const { elementVariable, ...rest } = zeebe;
    return {
      sequential: loop.isSequential === true,
      ...rest,
      cardinality: null,
      elementVariable: variableName(elementVariable, 'zeebe:loopCharacteristics inputElement', id) ?? 'item',
      outputCollection: variableName(zeebe.outputCollection, 'zeebe:loopCharacteristics outputCollection', id),
      completionCondition,
      completionConditionText,
    };
  }
  const collection = variableName(text(loop, 'collection'), 'inbox:collection', id);
  const cardinality = cardinalityOf(loop, id);
  if ((collection === null) === (cardinality === null))
    throw new ModelError(
      collection === null
        ? 'a multi-instance activity without inbox:collection or loopCardinality: name the list variable it runs over (inbox:collection="items")'
        : 'inbox:collection and loopCardinality together: give one',
      id,
    );
  const outputCollection = variableName(text(loop, 'outputCollection'), 'inbox:outputCollection', id);
  const outputElement = variableName(text(loop, 'outputElement'), 'inbox:outputElement', id);
  if ((outputCollection === null) !== (outputElement === null))
    throw new ModelError(
      'inbox:outputCollection and inbox:outputElement go together: the item variable to collect, and the list to collect it into',
      id,
    );
  return {
    sequential: loop.isSequential === true,
    collection,
    cardinality,
    elementVariable: variableName(text(loop, 'elementVariable'), 'inbox:elementVariable', id) ?? 'item',
    outputCollection,
    outputElement,
    completionCondition,
    completionConditionText,
  };
}
