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
  /** A FEEL expression (written `=…`, kept without the `=`), checked at load; true or false when evaluated, else an incident. */
  | { readonly kind: 'feel'; readonly expression: string }
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
  /** The embedded subprocess it is drawn in (its id); absent at the process level. Flows never cross it. */
  readonly scope?: string;
  /** Multi-instance characteristics: the activity runs once per item; absent for a plain activity. */
  readonly loop?: MultiInstance;
  /** Its `zeebe:ioMapping`; absent without one. */
  readonly io?: IoMapping;
  /** Its `zeebe:properties`, name to value: kept for tools and people, never read by the engine. */
  readonly properties?: Readonly<Record<string, string>>;
}

/**
 * The kinds whose `zeebe:ioMapping` outputs set variables as a token
 * passes them (over the variables; inputs there are refused at load).
 */
export const OUTPUTS_AS_PASSED: ReadonlySet<string> = new Set([
  'startEvent',
  'messageStartEvent',
  'endEvent',
  'passThrough',
  'boundaryError',
  'boundaryTimer',
  'boundaryEscalation',
]);

/**
 * One mapping of `zeebe:ioMapping`: `target` (a variable name) gets the
 * value of the FEEL `expression`, or the text `value` when the source is
 * not FEEL (Camunda 8 reads a source without `=` as a text).
 */
export interface Mapping {
  readonly target: string;
  readonly expression?: string;
  readonly value?: string;
}

/**
 * `zeebe:ioMapping` of a job (a task with a handler), a user task or a
 * message wait. Inputs are evaluated over the instance's variables when the
 * handler runs, and it sees the variables with the inputs laid over them;
 * they are never stored. With outputs, only the outputs come back: each is
 * evaluated over the variables, the inputs and the result (the handler's,
 * the completion's, the message's) and stored in the instance; without
 * outputs the whole result is merged, as before. A failed evaluation is an
 * EXPRESSION_FAILED incident naming the element and the expression.
 */
export interface IoMapping {
  readonly inputs: readonly Mapping[];
  readonly outputs: readonly Mapping[];
}

/**
 * A multi-instance activity (`multiInstanceLoopCharacteristics`): it runs
 * once per item of the list in the variable `collection`
 * (`inbox:collection`), or `cardinality` times (`loopCardinality`: a whole
 * number, or `${variable}`). Each item runs as an instance of its own of
 * the activity alone (engine/items.ts: the item's state is never in the
 * caller's document), with the caller's variables, the item in
 * `elementVariable` (`inbox:elementVariable`, default `item`) and
 * `loopCounter` (1, 2, …). Sequential: one item after the other; parallel:
 * up to {@link ITEMS_IN_FLIGHT} at once. `outputElement`'s value in each
 * item, in item order, becomes `outputCollection` in the caller; nothing
 * else an item sets comes back. `completionCondition` is checked after each
 * item with the item's variables and the counts
 * (`numberOfInstances`, `numberOfCompletedInstances`,
 * `numberOfActiveInstances`, and Flowable's `nrOf…` names): true ends the
 * activity, terminating the items still running.
 */
export interface MultiInstance {
  readonly sequential: boolean;
  readonly collection: string | null;
  /** The FEEL list of `zeebe:loopCharacteristics inputCollection` when it is no plain variable (then collection is null). */
  readonly collectionExpression?: string;
  /** A literal count, or the variable that holds it; null with a collection. */
  readonly cardinality: { readonly literal: number } | { readonly variable: string } | null;
  readonly elementVariable: string;
  readonly outputCollection: string | null;
  readonly outputElement: string | null;
  /** The FEEL of `zeebe:loopCharacteristics outputElement` when it is no plain variable (then outputElement is null). */
  readonly outputElementExpression?: string;
  readonly completionCondition: Condition | null;
  readonly completionConditionText: string | null;
}

/** At most this many items of a parallel multi-instance activity run at once; the next starts as one ends. */
export const ITEMS_IN_FLIGHT = 100;
/** At most this many items per multi-instance activity: a longer collection is a STEP_LIMIT incident. */
export const MAX_ITEMS = 1_000;

/** The none start event: where `startProcess` (HTTP) starts an instance. */
export interface StartEventNode extends NodeBase {
  readonly kind: 'startEvent';
}

/**
 * A message start event: a message named `messageName` that reaches the
 * inbox and finds no waiting token starts an instance of this process, with
 * the message's correlation key as business key and stored into the process
 * variable `correlationVariable` (`inbox:correlationKey`), its payload merged
 * into the variables. At most one per message name across all deployed models.
 */
export interface MessageStartEventNode extends NodeBase {
  readonly kind: 'messageStartEvent';
  readonly messageName: string;
  /** Null: the key is the business key only (a Camunda 8 start event whose message names no plain variable). */
  readonly correlationVariable: string | null;
  /** A `zeebe:subscription correlationKey` as written (`=orderId`), when the key came from one. */
  readonly correlationKeyText?: string;
}

/**
 * A timer start event: the process starts on a schedule, `timeDate` once or
 * `timeCycle` repeatedly (`R/P1D`: for ever, a day apart from when the model
 * was first swept; `R5/PT1H`: five times). Literal texts only (no instance
 * has variables yet). The timer sweep (sweepJobs, every minute) starts each
 * due instance, with business key `ACTIVITY@DUE-TIME`, so a repeated sweep
 * finds it started.
 */
export interface TimerStartEventNode extends NodeBase {
  readonly kind: 'timerStartEvent';
  readonly timer: TimerDefinition;
}

/**
 * When a timer is due, as written in the model: one of BPMN's three timer
 * forms, either a literal or `${variable}` (a top-level process variable read
 * when the timer is set) with the model's default (`inbox:default` on the
 * timerEventDefinition) for when the variable is absent. Literals and
 * defaults are checked when the model loads (bpmn/timer.ts); a variable's
 * value when the timer is set (a bad one raises INVALID_TIMER).
 *
 * - `timeDuration`: an ISO 8601 duration of weeks, days, hours, minutes and
 *   seconds (`P14D`, `PT30S`, `P1DT12H`); days are 24 hours; years and months
 *   are refused (their length depends on the calendar).
 * - `timeDate`: an ISO 8601 date-time with an offset or `Z`.
 * - `timeCycle`: `R<n>/<duration>`, n from 1 to 1000: n firings, one
 *   duration apart, the first one duration after the timer is set. Only on
 *   non-interrupting boundary events (a reminder); unbounded cycles and cron
 *   are refused.
 */
export interface TimerDefinition {
  readonly type: 'timeDuration' | 'timeDate' | 'timeCycle';
  /** The expression's text as written, for messages. */
  readonly text: string;
  /** The variable of `${variable}` (or `=variable`); null for a literal or an expression. */
  readonly variable: string | null;
  /** A FEEL expression (`=…`, kept without the `=`) giving a duration, a date-time or a cycle text; evaluated when the timer is set. */
  readonly expression?: string;
  /** The literal, or the variable's default (`inbox:default`); null: a variable without default. */
  readonly value: string | null;
}

/** An intermediate timer catch event: the token waits until the timer is due. Alone, or a branch of an event-based gateway. */
export interface TimerCatchNode extends NodeBase {
  readonly kind: 'timerCatchEvent';
  readonly timer: TimerDefinition;
}

/**
 * A timer boundary event on an async service or send task or on a receive
 * task. Its timer is set when a token enters `attachedToId` and removed when
 * the token leaves it. Interrupting (`cancelActivity`, BPMN's default): the
 * token leaves the task by this event's flow. Non-interrupting: a new token
 * takes this event's flow and the first one stays (with a `timeCycle`, until
 * its repetitions are spent or the token leaves).
 */
export interface BoundaryTimerNode extends NodeBase {
  readonly kind: 'boundaryTimer';
  readonly attachedToId: string;
  readonly cancelActivity: boolean;
  readonly timer: TimerDefinition;
}

/**
 * An event-based gateway: the token waits at the gateway for whichever of
 * the events its flows lead to happens first (message catch events and timer
 * catch events, each with this gateway as its only way in); the others are
 * removed in the same transaction.
 */
export interface EventBasedGatewayNode extends NodeBase {
  readonly kind: 'eventBasedGateway';
}
/**
 * An end event: the token ends here. A terminate end event
 * (`terminateEventDefinition`) ends every other token of the instance too,
 * their waiting points, timers and jobs with them, and the instance completes.
 */
export interface EndEventNode extends NodeBase {
  readonly kind: 'endEvent';
  readonly terminate: boolean;
}

/**
 * An error end event: the token ends by throwing the BPMN error `errorCode`
 * (its `errorRef`'s `errorCode`), which the nearest enclosing subprocess
 * with a matching error boundary event catches; uncaught, it is an
 * UNCAUGHT_ERROR incident naming the code.
 */
export interface ErrorEndEventNode extends NodeBase {
  readonly kind: 'errorEndEvent';
  readonly errorCode: string;
}

/**
 * An error boundary event on an async task (its handler throws
 * `BpmnError`), a synchronous task (the same, inside the transaction) or an
 * embedded subprocess (an error end event inside it, or an error its tasks
 * throw and nothing nearer catches). Always interrupting: the task's job or
 * everything inside the subprocess ends, and the token takes this event's
 * flow. `errorCode` null catches every code; a boundary with the exact code
 * is preferred to one that catches all.
 */
export interface BoundaryErrorNode extends NodeBase {
  readonly kind: 'boundaryError';
  readonly attachedToId: string;
  readonly errorCode: string | null;
}

/**
 * A message boundary event on an async task, a user task, a receive task or
 * a subprocess: while a token waits there, it also waits (in standby: the
 * waiting gauges leave it out) for `messageName` with the correlation key in
 * `correlationVariable`. Interrupting (default): the message takes the token
 * through this event (everything inside a subprocess ends first).
 * Non-interrupting: a new token takes this event's flow and the first keeps
 * waiting, for this message too.
 */
export interface BoundaryMessageNode extends NodeBase {
  readonly kind: 'boundaryMessage';
  readonly attachedToId: string;
  readonly cancelActivity: boolean;
  readonly messageName: string;
  readonly correlationVariable: string | null;
  readonly correlationExpression?: string;
  /** A `zeebe:subscription correlationKey` as written (`=orderId`), when the key came from one. */
  readonly correlationKeyText?: string;
}

/** What starts an event subprocess: its start event's definition. */
export type EventTrigger =
  /** An escalation thrown inside its scope (interrupting or not); escalationCode null catches every code. */
  | { readonly kind: 'escalation'; readonly escalationCode: string | null }
  /** A BPMN error thrown inside its scope (always interrupting); errorCode null catches every code. */
  | { readonly kind: 'error'; readonly errorCode: string | null }
  /** A message, correlated like any wait, on `inbox:correlationKey` of its start event. */
  | {
      readonly kind: 'message';
      readonly messageName: string;
      readonly correlationVariable: string | null;
      readonly correlationExpression?: string;
      /** A `zeebe:subscription correlationKey` as written (`=orderId`), when the key came from one. */
      readonly correlationKeyText?: string;
    }
  /** A timer from when its scope starts (a cycle repeats, non-interrupting only). */
  | { readonly kind: 'timer'; readonly timer: TimerDefinition };

/**
 * An event subprocess (`triggeredByEvent`): no flow leads in or out. While
 * its scope (the process, or the subprocess it is drawn in) runs, a message
 * or timer trigger waits in standby as a token of its own; an error trigger
 * is found when an error is thrown in the scope. Interrupting (its start
 * event's `isInterrupting`, the default): every other token of the scope
 * ends, then it runs, and the scope ends or goes on when it is done.
 * Non-interrupting: it runs beside the rest, once per message or timer
 * firing. When the scope's own tokens are done, its standby triggers go.
 */
export interface EventSubProcessNode extends NodeBase {
  readonly kind: 'eventSubProcess';
  /** Its start event: where the token runs from once triggered. */
  readonly startEventId: string;
  readonly trigger: EventTrigger;
  readonly interrupting: boolean;
}

/**
 * An embedded subprocess: a token entering it waits there (WAITING_SCOPE)
 * while a child token runs from its none start event `startEventId`; when
 * no token is left inside, it leaves by its outgoing flow. Its nodes carry
 * `scope` = its id. Variables are the instance's: like Camunda 8 and
 * Flowable without input mappings, what a step inside sets is seen outside.
 * Timer and error boundary events may be attached to it; an interrupting
 * one ends every token inside.
 */
export interface SubProcessNode extends NodeBase {
  readonly kind: 'subProcess';
  readonly startEventId: string;
  /** Ids of the boundary events attached to it, in document order. */
  readonly boundaryEventIds: readonly string[];
}

/**
 * A task the engine passes through without work: an untyped `task`, a
 * `manualTask` (done outside any system) or an `intermediateThrowEvent`
 * without event definition (a milestone). `element` is its XML name.
 */
export interface PassThroughNode extends NodeBase {
  readonly kind: 'passThrough';
  readonly element: 'task' | 'manualTask' | 'intermediateThrowEvent';
}

/**
 * A parallel gateway. As a fork (several outgoing flows) it sends a token
 * down every one; as a join (several incoming flows) a token waits
 * (WAITING_JOIN) until a token has arrived by every incoming flow, then one
 * token goes on and the others end. Conditions on its flows are refused.
 */
export interface ParallelGatewayNode extends NodeBase {
  readonly kind: 'parallelGateway';
}

/**
 * An inclusive gateway. As a fork: a token goes down every outgoing flow
 * whose condition holds (a flow without a condition always), else down the
 * default flow; none and no default is NO_MATCHING_FLOW. As a join (several
 * incoming flows): a token waits (WAITING_JOIN) until every incoming flow a
 * token of its scope can still reach has brought one (engine/joins.ts).
 */
export interface InclusiveGatewayNode extends NodeBase {
  readonly kind: 'inclusiveGateway';
  readonly defaultFlowId: string | null;
}

/**
 * A user task: the token waits (WAITING_USER) until a person completes the
 * task (`inbox tasks complete`, the console); the completion's variables
 * are merged. Who may do it and with which form are stored and shown, never
 * enforced or rendered: `inbox:assignee`, `inbox:candidateGroups`
 * (comma-separated), `inbox:formKey`.
 */
export interface UserTaskNode extends NodeBase {
  readonly kind: 'userTask';
  readonly assignee: string | null;
  readonly candidateGroups: readonly string[];
  readonly formKey: string | null;
  /** `zeebe:assignmentDefinition candidateUsers`, stored as written; absent when none. */
  readonly candidateUsers?: readonly string[];
  /** Ids of the timer boundary events attached to it, in document order. */
  readonly boundaryEventIds: readonly string[];
}

/**
 * A job's `zeebe:taskDefinition`: the handler is looked up by `type`, so
 * several tasks share one; `retries` bounds its failed runs (absent: the
 * system's INBOX_JOB_MAX_ATTEMPTS); `headers` (`zeebe:taskHeaders`) are
 * given to the handler as written.
 */
export interface JobDefinition {
  readonly type: string;
  readonly retries?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The key a job's handler is registered under in the app's `steps`: its task type, else the element's id. */
export const handlerKeyOf = (node: { readonly id: string; readonly job?: JobDefinition }): string =>
  node.job?.type ?? node.id;

/**
 * A service, send or business rule task. The handler is looked up by the task id,
 * or by the type of its `zeebe:taskDefinition` (`job`), which makes it async.
 * `async`: the token stops here and a job runs the handler later (Cloud
 * Tasks); otherwise the handler runs inside the transaction and must be pure.
 */
export interface TaskNode extends NodeBase {
  readonly kind: 'serviceTask' | 'sendTask' | 'businessRuleTask';
  readonly async: boolean;
  /**
   * A send task's `messageRef` (the message's name): it publishes that
   * message (always a job, so `async` is true); absent for a task whose
   * handler does the work.
   */
  readonly messageName?: string;
  /** Its `zeebe:taskDefinition`; absent for a task of the inbox namespace. */
  readonly job?: JobDefinition;
  /** Ids of the timer boundary events attached to it, in document order (only async tasks may have any). */
  readonly boundaryEventIds: readonly string[];
}

/**
 * An escalation intermediate throw event or escalation end event: it throws
 * `escalationCode` (its escalationRef's) to the enclosing scopes, outwards:
 * the first escalation event subprocess or escalation boundary event on an
 * enclosing subprocess that catches it runs (interrupting: everything in
 * that scope ends first; not: beside it). Uncaught, nothing happens (an
 * escalation is a notice, not an error). Then the throw event's token goes
 * on and the end event's ends, unless an interrupting catcher ended it.
 */
export interface EscalationThrowNode extends NodeBase {
  readonly kind: 'escalationThrowEvent' | 'escalationEndEvent';
  readonly escalationCode: string;
}

/** An escalation boundary event on an embedded subprocess: catches its escalationRef's code, or every code without one. */
export interface BoundaryEscalationNode extends NodeBase {
  readonly kind: 'boundaryEscalation';
  readonly attachedToId: string;
  readonly escalationCode: string | null;
  readonly cancelActivity: boolean;
}

/**
 * A message intermediate throw event or message end event: the token waits
 * (WAITING_JOB) while a job publishes the message `messageName`, after the
 * commit of the transaction that reached it: by the system, to the topic
 * the app's `sends` gives the message, or by the app's step handler of the
 * element's id (a worker, as in Camunda 8). Then it goes on (an end event:
 * it ends).
 */
export interface MessageThrowNode extends NodeBase {
  readonly kind: 'messageThrowEvent' | 'messageEndEvent';
  /** Null: no messageRef, a Camunda 8 event whose worker (`job`) publishes what it likes. */
  readonly messageName: string | null;
  /** Its `zeebe:taskDefinition`: a handler of that type publishes it. */
  readonly job?: JobDefinition;
}

/** Whether a node publishes a message by a job: a message throw or end event, or a send task with a messageRef. */
export const publishesByJob = (node: FlowNode): boolean =>
  node.kind === 'messageThrowEvent' ||
  node.kind === 'messageEndEvent' ||
  (node.kind === 'sendTask' && node.messageName !== undefined);

/** The name of the message a node publishes by a job (a message throw or end event, a send task with a messageRef), or null. */
export const publishedMessage = (node: FlowNode): string | null =>
  node.kind === 'messageThrowEvent' || node.kind === 'messageEndEvent'
    ? node.messageName
    : node.kind === 'sendTask'
      ? (node.messageName ?? null)
      : null;

/**
 * The key of the system's publishing step of element `elementId` in the
 * model of process `processKey` (jobs/publish-steps.ts), beside the app's
 * handlers, which are keyed by task type or element id: an element id is
 * unique only within its model, and a model copied from another keeps its
 * ids, so two models' publishing elements may share one. The two parts are
 * joined by U+0000, which no XML document can hold, so no app handler's key
 * (an element id or a task type, both written in a model) is ever one.
 */
export const publishStepKey = (processKey: string, elementId: string): string => `${processKey}\u0000${elementId}`;

/**
 * A call activity: a token entering it starts an instance of the process
 * `calledProcess` (the BPMN `calledElement`, a process id of the same app)
 * in the same transaction, and waits (WAITING_CALL) until that instance has
 * no token left; then the child's variables are merged into the caller's
 * and the token goes on. The child starts with a copy of all the caller's
 * variables and the caller's business key (Camunda 8's defaults: all
 * variables in, all out). An interrupting timer or message boundary event,
 * a terminate end event or a repair that takes the token away terminates
 * the child, and its children, in the same transaction.
 */
export interface CallActivityNode extends NodeBase {
  readonly kind: 'callActivity';
  readonly calledProcess: string;
  /**
   * `zeebe:calledElement propagateAllChildVariables="false"`: none of the
   * child's variables come back, only its `zeebe:ioMapping` outputs (the
   * inputs go into the child's start variables; outputs are evaluated over
   * the caller's variables, the inputs and the child's variables).
   */
  readonly propagateChildVariables?: false;
  /** Ids of the timer and message boundary events attached to it, in document order. */
  readonly boundaryEventIds: readonly string[];
}

/**
 * An intermediate message catch event or a receive task: the token waits
 * until a message named `messageName` arrives whose correlation key equals
 * the value of the process variable `correlationVariable`, or of the FEEL
 * `correlationExpression` (a `zeebe:subscription` key that is no plain
 * variable; then correlationVariable is null), evaluated when the token
 * arrives.
 */
export interface MessageWaitNode extends NodeBase {
  readonly kind: 'messageCatchEvent' | 'receiveTask';
  readonly messageName: string;
  readonly correlationVariable: string | null;
  readonly correlationExpression?: string;
  /** A `zeebe:subscription correlationKey` as written (`=orderId`), when the key came from one. */
  readonly correlationKeyText?: string;
  /** Ids of the timer boundary events attached to it (a receive task; always empty for a catch event). */
  readonly boundaryEventIds: readonly string[];
}

export interface ExclusiveGatewayNode extends NodeBase {
  readonly kind: 'exclusiveGateway';
  /** Flow taken when no condition holds; null if none is marked default. */
  readonly defaultFlowId: string | null;
}

/**
 * A BPMN element the engine can run, told apart by `kind`. These shapes are
 * all there is: the parser refuses every other element (a subprocess, a
 * message boundary event, a signal) when the model loads, so a switch over
 * `kind` can name every case, and lint's switch-exhaustiveness-check makes a
 * new kind visit each of them.
 */
export type FlowNode =
  | StartEventNode
  | MessageStartEventNode
  | EndEventNode
  | TaskNode
  | MessageWaitNode
  | TimerCatchNode
  | BoundaryTimerNode
  | ExclusiveGatewayNode
  | EventBasedGatewayNode
  | PassThroughNode
  | ParallelGatewayNode
  | InclusiveGatewayNode
  | UserTaskNode
  | ErrorEndEventNode
  | BoundaryErrorNode
  | BoundaryMessageNode
  | SubProcessNode
  | EventSubProcessNode
  | TimerStartEventNode
  | CallActivityNode
  | MessageThrowNode
  | EscalationThrowNode
  | BoundaryEscalationNode;

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
  /** Id of the none start event (at most one), where startProcess starts; null when the process starts by message only. */
  readonly startEventId: string | null;
  /** The message start events by message name (node ids); empty when none. */
  readonly messageStartEvents: Readonly<Record<string, string>>;
  /**
   * Every flow node by its BPMN id. Own properties only (built with
   * Object.fromEntries), so an id such as `__proto__` is an ordinary key.
   */
  readonly nodes: Readonly<Record<string, FlowNode>>;
  /** Every sequence flow by its BPMN id; nodes name theirs in `incoming` and `outgoing`. */
  readonly flows: Readonly<Record<string, SequenceFlow>>;
}

/**
 * Upper bound of nodes one token passes in one step. The load refuses a
 * chain of more nodes without a wait (check-waits.ts); the engine raises
 * STEP_LIMIT should a step still exceed it.
 */
export const STEP_LIMIT = 1_000;

/**
 * Upper bound of the work of one transition in all: every node any token
 * enters, plus every token it creates (forks, scopes, handlers, boundary
 * tokens). A step that would do more stops with STEP_LIMIT on the token that
 * passes it, whatever the shape that got it there (a loop through error
 * handlers, a fork in a loop), so a transition always ends, in bounded time
 * and memory.
 */
export const TRANSITION_BUDGET = 10 * STEP_LIMIT;

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
