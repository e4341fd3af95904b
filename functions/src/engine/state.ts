/**
 * Process state as the engine core sees it: plain values in, plain values
 * out. The Firestore store (functions/src/engine/store/) maps these to the
 * collections described in docs/data-model.md.
 */

export type InstanceStatus = 'RUNNING' | 'COMPLETED' | 'INCIDENT';

/** Why an instance needs a human. */
export type IncidentReason =
  /** Two tokens wait for the same message and key: the next message would be ambiguous. */
  | 'DUPLICATE_WAITING_POINT'
  /** An async step failed on every attempt. */
  | 'JOB_FAILED'
  /** An exclusive gateway found no condition true and has no default flow. */
  | 'NO_MATCHING_FLOW'
  /** A message wait's correlation variable is missing or not a string/number. */
  | 'MISSING_CORRELATION_KEY'
  /** A token passed more nodes in one step than any sane model needs (a loop without wait). */
  | 'STEP_LIMIT'
  /** A timer's `${variable}` is absent without a default, or its value is no valid duration, date or cycle. */
  | 'INVALID_TIMER'
  /** Tokens wait at a parallel join and no token is left that could bring the missing ones. */
  | 'JOIN_INCOMPLETE'
  /** A BPMN error (an error end event, a handler's BpmnError) that no error boundary event catches. */
  | 'UNCAUGHT_ERROR'
  /** A multi-instance activity's collection is no list, or its loopCardinality no whole number. */
  | 'INVALID_ITEMS'
  /** A FEEL expression failed: a variable missing, an evaluation that failed, a condition neither true nor false. */
  | 'EXPRESSION_FAILED'
  /** An event would have added a token to an instance that holds {@link MAX_LIVE_TOKENS} already: it was not taken. */
  | 'TOKEN_LIMIT'
  /** A step could not be applied (its transition threw: e.g. a timer's path through a model that changed): it was not taken. */
  | 'STEP_FAILED';

export interface Incident {
  readonly reason: IncidentReason;
  readonly executionId: string;
  readonly activityId: string;
  readonly message: string;
  readonly at: Date;
  /** Set when an operator resolved it (`inbox repair resolve-incident`); absent or null while open. */
  readonly resolvedAt?: Date | null;
  /** The operator's note on the resolution (`--note`), or null. */
  readonly resolution?: string | null;
}

/** An incident nobody has resolved yet. */
export const isOpenIncident = (incident: Incident): boolean =>
  incident.resolvedAt === undefined || incident.resolvedAt === null;

/** How many correlated message ids an instance keeps (bounds the document for looping models). */
export const CORRELATED_MESSAGES_KEPT = 100;

/**
 * One process instance, stored as `processInstances/{id}` (Dates as
 * Timestamps; docs/data-model.md). Changed only inside a Firestore
 * transaction: by the engine's transitions (start, job done, message
 * correlated) and by the operator's repair commands.
 */
export interface InstanceState {
  /** instanceId(processKey, businessKey): one instance per pair, so a second start finds the first. */
  readonly id: string;
  /** The BPMN process id of its model (`ProcessModel.key`, engine/model.ts). */
  readonly processKey: string;
  /**
   * `ProcessModel.version` at the start (the model's content hash): the
   * version every step of this instance runs on, kept in `processVersions`
   * (engine/store/versions.ts) until `inbox versions --retire`. Changed only
   * by `inbox migrate`.
   */
  readonly processVersion: string;
  /** The caller's key for the instance (an order or case number): trimmed, 1 to 256 characters (startProcess checks). */
  readonly businessKey: string;
  /**
   * RUNNING while a token moves or waits; INCIDENT from the first open
   * incident until `inbox repair resolve-incident`; COMPLETED once no token
   * is left. A repair that adds a token makes a COMPLETED instance RUNNING.
   */
  readonly status: InstanceStatus;
  /**
   * The start's variables, then merged (later values win) with what each
   * async handler returns and each correlated message's payload. Plain
   * values only: they are stored, and gateway conditions read them.
   */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Executions (tokens) not yet ended: the instance completes when this is empty. */
  readonly activeExecutionIds: readonly string[];
  /** Every incident raised, resolved ones included (see {@link isOpenIncident}); none is ever removed. */
  readonly incidents: readonly Incident[];
  /**
   * Inbox ids of the messages correlated into this instance, oldest first,
   * the last {@link CORRELATED_MESSAGES_KEPT} only. An audit trail: the same
   * id twice means a message moved the process twice. Absent on instances
   * that never received a message.
   */
  readonly correlatedMessages?: readonly string[];
  /**
   * How many of `incidents` an operator resolved; absent until the first.
   * A top-level number so `inbox incidents --all` finds instances whose
   * incidents are all resolved (no longer INCIDENT) with one query.
   */
  readonly resolvedIncidents?: number;
  /**
   * The start request that created the instance (startProcess chooses one
   * per HTTP request). A re-run of the start's transaction after a commit
   * that landed but reported an error finds it here and reports the start as
   * its own (201, its jobs dispatched), not as someone else's (200).
   */
  readonly startRequestId?: string;
  /** The call activity that started it (the caller's instance, token and activity); absent for a top-level instance. */
  readonly calledBy?: CallerRef;
  /**
   * Set when its caller ended it (the call activity's token left without
   * it: an interrupting boundary event, a terminate end event, a repair):
   * its tokens were CANCELLED and it is COMPLETED, and its end does not
   * move the caller.
   */
  readonly terminated?: { readonly at: Date; readonly reason: string };
  /** The inbox id of the message whose message start event started it; absent for a start by startProcess. */
  readonly startedByMessage?: string;
  /** When the start's transaction ran (the function's clock). */
  readonly createdAt: Date;
  /** When the last transition or repair changed it. */
  readonly updatedAt: Date;
  /** When its last token ended; null while a token is left (cleared when a repair adds one). */
  readonly completedAt: Date | null;
}

/** Where a called instance reports back: the caller's instance and the token waiting at its call activity. */
export interface CallerRef {
  readonly instanceId: string;
  readonly executionId: string;
  readonly activityId: string;
  /** 1 for a child of a top-level instance, its caller's depth + 1 below (bounded by MAX_CALL_DEPTH). */
  readonly depth: number;
  /** Set for an item of a multi-instance activity: its index (0-based) and its batch (the caller token's `items.batch`). */
  readonly item?: { readonly index: number; readonly batch: string };
}

/**
 * A multi-instance activity's items, as its token holds them while it
 * waits (WAITING_ITEMS). Each item is an instance of its own; what ended
 * is counted in `itemBatches/{batch}-{shard}` (engine/store/items.ts), so
 * the caller's document is written when the activity starts and ends only.
 */
export interface ItemsState {
  /** itemBatchId(executionId, step): names the item instances and the batch's documents. */
  readonly batch: string;
  readonly total: number;
  /** How many documents count the items (item i counts in shard i mod shards). */
  readonly shards: number;
  /** How many items of each shard start at once (the next starts as one ends): 1 for a sequential activity. */
  readonly window: number;
  /** The collection's items as read when the activity started; null for loopCardinality. */
  readonly elements: readonly unknown[] | null;
  /**
   * Set when the completion condition failed after an item (the failure's
   * text; an EXPRESSION_FAILED incident names it): the activity starts no
   * further item and cannot finish by itself, so `inbox repair
   * resolve-incident` is refused until a repair moves or cancels the token.
   */
  readonly conditionFailed?: string;
}

/**
 * Most tokens one instance holds live at once (its document holds every one
 * of them). An event that would add one more (a non-interrupting boundary
 * event or event subprocess, a fork) is not taken: a TOKEN_LIMIT incident
 * says so, and a message that would have started it is parked instead of
 * correlated, so a flood of messages to one instance ends bounded and visible.
 */
export const MAX_LIVE_TOKENS = 1_000;

/** How deep call activities may nest: a process that calls itself before any wait would otherwise start instances without end. */
export const MAX_CALL_DEPTH = 50;

export type ExecutionStatus =
  /** Moving (only inside a transition) or stopped by an incident. */
  | 'ACTIVE'
  /** At an async task; a job will move it on. */
  | 'WAITING_JOB'
  /** At a message wait; correlation will move it on. */
  | 'WAITING_MESSAGE'
  /** At an intermediate timer catch event; its timer will move it on. */
  | 'WAITING_TIMER'
  /** At an event-based gateway: the first of its messages (`gatewayWaits`) or timers (`timerIds`) moves it on. */
  | 'WAITING_EVENT'
  /** At a parallel join, arrived by `arrivedBy`: the join goes on when every incoming flow has brought a token. */
  | 'WAITING_JOIN'
  /** At a user task (`userTaskId`): a person's completion moves it on. */
  | 'WAITING_USER'
  /** At an embedded subprocess: its child tokens (`parentId` = this id) run inside; the last one to end moves it on. */
  | 'WAITING_SCOPE'
  /** At a multi-instance activity (`items`): its items run as instances of their own; when the last ends (or the completion condition holds), it moves on. */
  | 'WAITING_ITEMS'
  /** At a call activity: the instance it started (`calledInstanceId`) runs; when that has no token left, it moves on. */
  | 'WAITING_CALL'
  | 'ENDED'
  | 'CANCELLED';

export interface ExecutionState {
  readonly id: string;
  readonly processInstanceId: string;
  readonly activityId: string;
  readonly status: ExecutionStatus;
  /** Node entries so far; makes job ids unique when a token visits a task twice. */
  readonly step: number;
  readonly jobId: string | null;
  /** WAITING_MESSAGE: the message and key it waits for (a receive task or a message catch event). */
  readonly waitingFor: { readonly messageName: string; readonly correlationKey: string } | null;
  /** WAITING_EVENT: the message branches of its event-based gateway; absent or empty otherwise. */
  readonly gatewayWaits?: readonly GatewayWait[];
  /** The subprocess token (WAITING_SCOPE) this token runs inside; absent at the process level. */
  readonly parentId?: string | undefined;
  /** A standby trigger of an event subprocess (WAITING_MESSAGE or WAITING_TIMER at it): not part of its scope's own work. */
  readonly trigger?: true | undefined;
  /** The message boundary events it waits for besides its own wait (standby points); absent or empty otherwise. */
  readonly boundaryWaits?: readonly GatewayWait[] | undefined;
  /** WAITING_JOIN: the incoming flow it arrived by. */
  readonly arrivedBy?: string | undefined;
  /** WAITING_ITEMS: its multi-instance activity's items. */
  readonly items?: ItemsState | undefined;
  /** WAITING_CALL: the instance its call activity started (`processInstances/{id}`). */
  readonly calledInstanceId?: string | undefined;
  /** WAITING_USER: the user task it waits for (`userTasks/{id}`). */
  readonly userTaskId?: string | undefined;
  /**
   * PENDING timers this token waits with: its timer catch event's, its
   * gateway's timer branches', its task's boundary timers'. Removed (timer
   * documents deleted) in the transaction in which the token leaves the node.
   * Absent (stored before timers existed) means none.
   */
  readonly timerIds?: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One message branch of an event-based gateway a token waits at. */
export interface GatewayWait {
  readonly messageName: string;
  readonly correlationKey: string;
  /** The message catch event the branch goes through. */
  readonly activityId: string;
}

export type JobStatus = 'PENDING' | 'DONE' | 'FAILED';

/**
 * `lastError` of a job ended DONE without its handler's result moving
 * anything: its token no longer waits for it (a repair moved or cancelled
 * the token, an interrupting boundary timer took it on). DONE (not FAILED):
 * nothing is left to do or repair. Documented in docs/data-model.md (jobs).
 */
export const STALE_JOB_ERROR = 'token no longer waits for this job';

/** An async continuation: run the handler of `activityId`, then move the token on. */
export interface JobState {
  readonly id: string;
  readonly processInstanceId: string;
  readonly executionId: string;
  readonly activityId: string;
  /** The task's `zeebe:taskDefinition` type: the handler runJob looks up first; absent for a task of the inbox namespace. */
  readonly taskType?: string;
  /** Its `zeebe:taskDefinition retries`: the failed runs before it is FAILED; absent: INBOX_JOB_MAX_ATTEMPTS. */
  readonly maxAttempts?: number;
  readonly status: JobStatus;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/**
 * Whether a job may still move its token: the token exists and waits at the
 * job's task for this very job. A job that is not live is stale wherever it
 * is met (runJob's start, its failure, its completion): it ends without
 * touching the token, so it never moves a token it no longer owns.
 */
export function jobIsLive(execution: ExecutionState | undefined, job: Pick<JobState, 'id'>): boolean {
  return execution !== undefined && execution.status === 'WAITING_JOB' && execution.jobId === job.id;
}

/** A token waiting for a message: what the correlation looks up. */
export interface WaitingPoint {
  readonly messageName: string;
  readonly correlationKey: string;
  readonly processInstanceId: string;
  readonly executionId: string;
  /** The message catch event or receive task the message moves the token through. */
  readonly activityId: string;
  /**
   * Set when the point is a branch of an event-based gateway the token waits
   * at (its id); such a token has one point per message branch in its key
   * documents' `waiting`, and the first message it takes removes them all.
   */
  readonly gatewayId?: string;
  /** Set for a message boundary event's point: the activity the token waits at, which the event is attached to. */
  readonly boundaryOf?: string;
  /**
   * A point that waits beside the token's own work (a message boundary
   * event, an event subprocess's message start): correlated like any other,
   * left out of the waiting gauges and `inbox waiting`, which watch the
   * waits a process cannot go on without.
   */
  readonly standby?: true;
  readonly createdAt: Date;
}

export type TimerStatus =
  /** Waiting to be due; its Cloud Task exists, or the sweep creates it once due within the horizon. */
  | 'PENDING'
  /** Fired: its token took the timer's path (kept as a record until `expireAt`). */
  | 'FIRED';

/**
 * A timer, stored as `timers/{id}` (plus the store's `shard`, `horizon` and
 * `expireAt`; docs/data-model.md). Created in the transaction that creates
 * its waiting point; deleted in the one in which its token leaves without
 * it; fired at most once, by the transaction that finds it PENDING and its
 * token still waiting with it.
 */
export interface TimerState {
  /** timerId(executionId, step, activityId, occurrence): a re-run of the same step sets the same timer. */
  readonly id: string;
  readonly processInstanceId: string;
  readonly executionId: string;
  /** The timer event: a timer catch event (alone or a gateway branch) or a timer boundary event. */
  readonly activityId: string;
  /** Where its token waits meanwhile: the timer catch event, the event-based gateway or the task the boundary event is on. */
  readonly waitingAt: string;
  /** The token's `step` when the timer was set. */
  readonly step: number;
  readonly dueAt: Date;
  /** 1 for a single timer; the firing's number within a `timeCycle`. */
  readonly occurrence: number;
  /** Firings of the cycle after this one; 0 for a single timer. */
  readonly repetitionsLeft: number;
  /** The cycle's interval, ms; null for a single timer. */
  readonly intervalMs: number | null;
  readonly status: TimerStatus;
  readonly createdAt: Date;
  readonly firedAt: Date | null;
}

export type UserTaskStatus =
  /** Waiting for a person. */
  | 'OPEN'
  /** Completed (`completedBy`, `completionRequestId`); a second completion with the same request id is "already completed". */
  | 'COMPLETED'
  /** Its token left without it (a boundary timer, a repair, a terminate end event): `cancelReason` says which; completing it is refused. */
  | 'CANCELLED';

/**
 * A user task a token waits at, stored as `userTasks/{id}` (plus the
 * store's `shard` and `expireAt`; docs/data-model.md). Created OPEN in the
 * transaction in which its token arrives; COMPLETED by the transaction that
 * moves the token on; CANCELLED in the one in which the token leaves
 * without it. Never deleted while OPEN.
 */
export interface UserTaskState {
  /** userTaskId(executionId, step): a re-run of the same step makes the same task. */
  readonly id: string;
  readonly processInstanceId: string;
  readonly processKey: string;
  readonly businessKey: string;
  readonly executionId: string;
  /** The userTask element. */
  readonly activityId: string;
  /** The element's name, for the task list; null when unnamed. */
  readonly name: string | null;
  /** The token's step when it arrived. */
  readonly step: number;
  readonly assignee: string | null;
  readonly candidateGroups: readonly string[];
  /** `zeebe:assignmentDefinition candidateUsers`, stored as written; absent when the model names none. */
  readonly candidateUsers?: readonly string[];
  readonly formKey: string | null;
  readonly status: UserTaskStatus;
  readonly createdAt: Date;
  /** When it was completed or cancelled; null while OPEN. */
  readonly closedAt: Date | null;
  /** Who completed it (the CLI's or console's actor). */
  readonly completedBy: string | null;
  /** The completion's request id: a second completion with it is the same completion. */
  readonly completionRequestId: string | null;
  readonly cancelReason: string | null;
}

/** A user task whose token left without completing it, and why. */
export interface ClosedUserTask {
  readonly id: string;
  readonly reason: string;
}

/** An instance a call activity starts: the store runs its start in the same transaction. */
export interface CallStart {
  readonly instanceId: string;
  readonly processKey: string;
  /** The version it starts on: a multi-instance activity's items run their caller's version; absent (a call activity's child): the one deployed now. */
  readonly processVersion?: string;
  readonly businessKey: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly calledBy: CallerRef;
}

/** A called instance whose caller's token left without it: the store terminates it in the same transaction. */
export interface CallCancel {
  readonly instanceId: string;
  readonly reason: string;
}

/** What one step of the engine changed. The store writes all of it in one transaction. */
export interface Transition {
  readonly instance: InstanceState;
  /** New or changed executions. */
  readonly executions: readonly ExecutionState[];
  /** New jobs (PENDING); dispatched to Cloud Tasks after the commit. */
  readonly jobs: readonly JobState[];
  readonly subscribe: readonly WaitingPoint[];
  readonly unsubscribe: readonly WaitingPoint[];
  /** New timers (PENDING); created in the same transaction, their Cloud Tasks after the commit. */
  readonly timers: readonly TimerState[];
  /** Ids of PENDING timers whose token left without them: deleted in the same transaction. */
  readonly cancelTimers: readonly string[];
  /**
   * Ids of jobs whose token left their task without them (a repair moved or
   * cancelled it, an interrupting boundary timer took it on): a PENDING one
   * ends in the same transaction (DONE, {@link STALE_JOB_ERROR}), so its
   * handler never runs and its failure can never drag the token back.
   */
  readonly staleJobs: readonly string[];
  /** New user tasks (OPEN), created in the same transaction. */
  readonly userTasks: readonly UserTaskState[];
  /** User tasks whose token left without them: CANCELLED in the same transaction, with the reason. */
  readonly closeUserTasks: readonly ClosedUserTask[];
  /** Instances its call activities start (created in the same transaction). */
  readonly calls: readonly CallStart[];
  /** Called instances whose caller left them: terminated in the same transaction. */
  readonly cancelCalls: readonly CallCancel[];
  /** Item batches whose multi-instance activity was left: their counting documents are deleted. */
  readonly endBatches: readonly { readonly batch: string; readonly shards: number }[];
}
