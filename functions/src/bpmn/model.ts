/**
 * A validated, executable process model: what the BPMN parser
 * (parse-model.ts) produces and the engine core (functions/src/engine/) runs.
 * Plain data, no moddle objects, so the engine stays pure and the model
 * serialisable. It lives beside the parser so that engine/ imports bpmn/ and
 * bpmn/ imports nothing of engine/ (ARCHITECTURE.md).
 */

/** A literal a condition compares with. */
export type Literal = string | number | boolean | null;

export type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=';

/**
 * A condition on process variables, parsed from a sequence flow's
 * conditionExpression. Deliberately tiny: comparisons of one variable with a
 * literal, combined with && and ||, and parentheses; never evaluated as code.
 */
export type Condition =
  | { readonly kind: 'compare'; readonly variable: string; readonly op: ComparisonOperator; readonly value: Literal }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly operand: Condition };

export interface SequenceFlow {
  readonly id: string;
  readonly sourceId: string;
  readonly targetId: string;
  /** null: unconditional. */
  readonly condition: Condition | null;
  /** The source text of the condition, for messages. */
  readonly conditionText: string | null;
}

interface NodeBase {
  readonly id: string;
  readonly name: string | null;
  /** Ids of outgoing sequence flows, in document order. */
  readonly outgoing: readonly string[];
  /** Ids of incoming sequence flows. */
  readonly incoming: readonly string[];
}

export interface StartEventNode extends NodeBase {
  readonly kind: 'startEvent';
}
export interface EndEventNode extends NodeBase {
  readonly kind: 'endEvent';
}

/**
 * A service or send task. The handler is looked up by the task id.
 * `async`: the token stops here and a job runs the handler later (Cloud
 * Tasks); otherwise the handler runs inside the transaction and must be pure.
 */
export interface TaskNode extends NodeBase {
  readonly kind: 'serviceTask' | 'sendTask';
  readonly async: boolean;
}

/**
 * An intermediate message catch event or a receive task: the token waits
 * until a message named `messageName` arrives whose correlation key equals
 * the value of the process variable `correlationVariable`.
 */
export interface MessageWaitNode extends NodeBase {
  readonly kind: 'messageCatchEvent' | 'receiveTask';
  readonly messageName: string;
  readonly correlationVariable: string;
}

export interface ExclusiveGatewayNode extends NodeBase {
  readonly kind: 'exclusiveGateway';
  /** Flow taken when no condition holds; null if none is marked default. */
  readonly defaultFlowId: string | null;
}

/**
 * A BPMN element the engine can run, told apart by `kind`. These five shapes
 * are all there is: the parser refuses every other element (a parallel
 * gateway, a timer, a boundary event) when the model loads, so a switch over
 * `kind` can name every case, and lint's switch-exhaustiveness-check makes a
 * new kind visit each of them.
 */
export type FlowNode = StartEventNode | EndEventNode | TaskNode | MessageWaitNode | ExclusiveGatewayNode;

/**
 * One deployed process: one `.bpmn` file, parsed and checked when the engine
 * loads (bpmn/parse-model.ts: one none start event, only end events end a
 * path, only exclusive gateways branch; Engine: one model per key, a handler
 * registered for every task). A bad model fails the load with a ModelError,
 * never a running instance. The engine always runs the model deployed now:
 * an instance started under an older version continues on the current one.
 */
export interface ProcessModel {
  /** The BPMN process id: the process key startProcess takes. */
  readonly key: string;
  /** The process's BPMN `name`, for people; null when the XML gives none. */
  readonly name: string | null;
  /** SHA-256 (hex, 16 chars) of the BPMN source, stored on instances for traceability (it pins nothing). */
  readonly version: string;
  /** Id of the (single) none start event. */
  readonly startEventId: string;
  /**
   * Every flow node by its BPMN id. Own properties only (built with
   * Object.fromEntries), so an id such as `__proto__` is an ordinary key.
   */
  readonly nodes: Readonly<Record<string, FlowNode>>;
  /** Every sequence flow by its BPMN id; nodes name theirs in `incoming` and `outgoing`. */
  readonly flows: Readonly<Record<string, SequenceFlow>>;
}

/** A model could not be loaded. The message names the element and what is wrong. */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    message: string,
    /** Id of the offending BPMN element, when there is one. */
    readonly elementId: string | null = null,
  ) {
    super(elementId === null ? message : `${elementId}: ${message}`);
  }
}
