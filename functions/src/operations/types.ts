/**
 * What the operator's two faces, the `inbox` CLI and the `inboxConsole`
 * function, ask of the operations module and get back. One implementation
 * of every read and repair lives in operations/; cli/ prints these values,
 * console/ sends them as JSON. So every value here is plain JSON: times are
 * ISO 8601 strings, absent values are null, never undefined.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { Config } from '../config';
import type { Engine } from '../engine/engine';
import type { Logger } from '../log';
import type { MessageRegistry } from '../receiver/registry';
import type { PayloadStore } from '../storage/payload-store';
import type { JobQueue } from '../tasks/job-queue';
import type { ModelNote } from './model-notes';

/** What an operation needs: the clients (created on first use), the configuration and the clock. */
export interface OperationsDeps {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  /** The app's message types (what a requeue re-reads a chunked payload with). */
  readonly registry: () => MessageRegistry;
  /** The folder of the deployed models (the console draws an instance's model from it). */
  readonly modelsDir: () => string;
  /** The jobs queue a repair's new jobs are dispatched to; null when INBOX_RUN_JOB_URL is unset (sweepJobs dispatches them). */
  readonly jobQueue: (() => JobQueue) | null;
  /** The timers queue a repair's new timers are dispatched to; null when INBOX_FIRE_TIMER_URL is unset (sweepJobs fires them when overdue). */
  readonly timerQueue: (() => JobQueue) | null;
  readonly payloadStore: () => PayloadStore;
  readonly config: Config;
  /** Where the one log line per applied repair goes (an audit or a log-based alert reads it). */
  readonly log: Logger;
  readonly now: () => Date;
}

/** The app a deployment runs, as the console names it: its name and its message names. */
export interface AppSummary {
  readonly name: string;
  readonly messages: readonly string[];
}

/** Who acts: a verified identity (console) or the operator's account on the machine (CLI). */
export interface Actor {
  /** An e-mail address (console: from the verified ID token) or `user@host` (CLI). */
  readonly id: string;
  readonly via: 'cli' | 'console';
}

/** What a console user may do: look, or look and repair (INBOX_CONSOLE_VIEWERS / INBOX_CONSOLE_REPAIRERS). */
export type Role = 'viewer' | 'repairer';

/** The figures of `inbox stats`: the overview page. */
export interface Overview {
  readonly at: string;
  readonly counts: { readonly OPEN: number; readonly DONE: number; readonly PARKED: number };
  /** Every park reason, 0 included. */
  readonly parkedByReason: Readonly<Record<string, number>>;
  readonly oldestOpenAgeSeconds: number | null;
  /** Process instances in INCIDENT (the alert's gauge; each may have several open incidents). */
  readonly openIncidents: number;
  readonly failedJobs: number;
  /** INBOX_WAITING_ALERT_DAYS: the age beyond which a waiting token counts as waiting too long. */
  readonly waitingAlertDays: number;
  readonly waiting: ReadonlyArray<{
    /** A message name's tokens, or OPEN user tasks (messageName `(user tasks)`: `inbox tasks list` shows them). */
    readonly kind: 'message' | 'userTasks';
    readonly messageName: string;
    readonly waitingOverThreshold: number;
    readonly oldestWaitingAgeSeconds: number | null;
  }>;
}

/** The filters of `inbox list` (all optional; values as the CLI's flags take them, already parsed). */
export interface DocumentFilters {
  readonly status?: 'OPEN' | 'DONE' | 'PARKED';
  readonly reason?: string;
  readonly messageName?: string;
  readonly correlationKey?: string;
  /** Received at least this long ago, ms. */
  readonly olderThanMs?: number;
}

/** One line of a document list. */
export interface DocumentRow {
  readonly id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly messageName: string | null;
  readonly correlationKey: string | null;
  readonly attempts: number;
  readonly receivedAt: string | null;
  /** lastError, else validationError, else null. */
  readonly error: string | null;
}

/** A page of documents in id order; `next` is the cursor of the following page (the last id), null on the last page. */
export interface DocumentPage {
  readonly documents: readonly DocumentRow[];
  readonly next: string | null;
}

/** `inbox explain`: where a document is, why, and what to do, in words. */
export interface ExplanationView {
  readonly summary: string;
  readonly because: readonly string[];
  readonly next: readonly string[];
}

/** One applied repair as recorded on the document or instance it changed. */
export interface RepairRecordView {
  readonly requestId: string;
  readonly kind: string;
  readonly at: string | null;
  /** Who did it (Actor.id); null for records written before repairs recorded it. */
  readonly by: string | null;
  readonly via: 'cli' | 'console' | null;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * What the receiver kept of a message as it came (rawData, or its
 * rawChunks): the whole of an unreadable one (INVALID_PAYLOAD), or of a
 * readable one too large for the document when its payload could not be
 * offloaded (the document keeps the summary). Its first bytes as text.
 */
export interface RawDataView {
  /** How many bytes were kept in all (rawDataBytes). */
  readonly bytes: number;
  /** DECODED: the message's data, base64-decoded; UNDECODABLE_BASE64: the data field's own characters (it was no base64); null: not recorded. */
  readonly form: string | null;
  /** The first `shownBytes` bytes as UTF-8, each byte that is not UTF-8 as U+FFFD. Text, never markup. */
  readonly text: string;
  readonly shownBytes: number;
  /** Whether the shown bytes are valid UTF-8 (false: some were replaced by U+FFFD). */
  readonly utf8: boolean;
}

/** `inbox show` and `inbox explain` of one document. */
export interface DocumentView {
  readonly id: string;
  readonly row: DocumentRow;
  /** The stored document, JSON-safe (Timestamps as ISO strings, bytes as base64), for the raw view. */
  readonly stored: Readonly<Record<string, unknown>>;
  /** The payload: inline (decoded), or where it was offloaded to / referenced, with whether the object is there. */
  readonly payload: {
    readonly inline: unknown;
    readonly offloaded: { readonly uri: string; readonly state: string } | null;
    readonly reference: { readonly uri: string; readonly state: string } | null;
  };
  /** The raw data the receiver kept, null when it kept none (a readable message: its payload is above). The exact bytes: GET /api/documents/ID/raw. */
  readonly raw: RawDataView | null;
  readonly deadLetter: Readonly<Record<string, unknown>> | null;
  readonly processInstanceId: string | null;
  readonly explanation: ExplanationView;
  readonly repairs: readonly RepairRecordView[];
}

/** One instance of a business key. */
export interface InstanceRow {
  readonly id: string;
  readonly processKey: string;
  readonly businessKey: string;
  readonly status: string;
  readonly createdAt: string | null;
  /** The version of its model it runs on (processVersion: the model's content hash, 16 hex digits); null when the document names none. */
  readonly processVersion: string | null;
  /** Tokens not ended. */
  readonly activeTokens: number;
  readonly openIncidents: number;
}

/** A page of instances (a process version's, in id order; a business key's, whole, with `next` null). */
export interface InstancePage {
  readonly instances: readonly InstanceRow[];
  /** The id to pass as `after` for the next page; null on the last. */
  readonly next: string | null;
}

/** The version an instance runs on, beside the one deployed now, and which of them its page draws. */
export interface InstanceVersionView {
  /** Its processVersion (the model's content hash); null when the document names none. */
  readonly id: string | null;
  /** The version new instances of its process start on now; null when the process is not deployed or the models cannot be loaded. */
  readonly deployed: string | null;
  /**
   * Whose XML `model` holds: the instance's own version (`own`, from the
   * deployed files when it is the deployed one, else from processVersions),
   * or the deployed model's (`deployed`) because its own version is not
   * stored (an instance started before versions were kept runs on the
   * deployed model); `none` when there is no model to draw.
   */
  readonly drawn: 'own' | 'deployed' | 'none';
}

export interface TokenView {
  readonly id: string;
  readonly activityId: string;
  readonly status: string;
  readonly waitingFor: string | null;
  /** WAITING_CALL: the instance its call activity started; else null. */
  readonly calledInstanceId: string | null;
}

/** An instance a call activity of this one started and waits for, as it stands now. */
export interface CallView {
  readonly executionId: string;
  readonly activityId: string;
  readonly instanceId: string;
  /** null when the called instance's document is gone. */
  readonly processKey: string | null;
  readonly status: string | null;
  readonly openIncidents: readonly IncidentView[];
}

export interface TimerView {
  readonly id: string;
  readonly activityId: string;
  readonly status: string;
  readonly dueAt: string | null;
}

export interface IncidentView {
  readonly reason: string;
  readonly activityId: string | null;
  readonly executionId: string | null;
  readonly message: string;
  readonly createdAt: string | null;
  readonly resolvedAt: string | null;
}

export interface JobView {
  readonly id: string;
  readonly activityId: string;
  readonly status: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

/** One correlated message of the audit trail (`correlatedMessages`), with its inbox document as it is now (null: gone, e.g. purged). */
export interface AuditEntry {
  readonly inboxId: string;
  readonly row: DocumentRow | null;
}

/** What the diagram shows on one BPMN element. */
export interface ElementOverlay {
  readonly activityId: string;
  readonly tokens: number;
  readonly waiting: number;
  readonly timers: number;
  readonly incidents: number;
}

/** `inbox instances` of one instance, everything its page shows. */
export interface InstanceView {
  readonly row: InstanceRow;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly tokens: readonly TokenView[];
  readonly timers: readonly TimerView[];
  readonly incidents: readonly IncidentView[];
  readonly jobs: readonly JobView[];
  /** Oldest first, as stored (the last 100). */
  readonly audit: readonly AuditEntry[];
  /** PARKED inbox documents of this instance's correlation keys (e.g. the AMBIGUOUS completion that met two tokens). */
  readonly parked: readonly DocumentRow[];
  readonly repairs: readonly RepairRecordView[];
  /** Its version, the deployed one, and which of them `model` is. */
  readonly version: InstanceVersionView;
  /**
   * The BPMN XML of the version it runs on (`version.drawn` says whose),
   * and what each element runs as the engine read it (handler types,
   * message keys, FEEL, mappings; model-notes.ts); null when there is none
   * to draw (the process is no longer deployed and its version not stored).
   */
  readonly model: {
    readonly processKey: string;
    /** The version this XML is (its content hash). */
    readonly version: string;
    readonly xml: string;
    readonly notes: readonly ModelNote[];
  } | null;
  readonly overlays: readonly ElementOverlay[];
  /** The call activity that started it; null for a top-level instance. */
  readonly calledBy: { readonly instanceId: string; readonly activityId: string } | null;
  /** The instances its waiting call activities started (their open incidents count on the call activity's overlay). */
  readonly calls: readonly CallView[];
}

/** A repair, as the CLI's flags or the console's form state it. */
export type RepairRequest =
  | { readonly kind: 'requeue'; readonly id: string }
  | { readonly kind: 'park'; readonly id: string; readonly text: string }
  | {
      readonly kind: 'move-token';
      readonly instanceId: string;
      readonly activityId: string;
      readonly executionId: string | null;
      readonly force: boolean;
    }
  | { readonly kind: 'cancel-token'; readonly instanceId: string; readonly executionId: string }
  | { readonly kind: 'resolve-incident'; readonly instanceId: string; readonly note: string | null }
  /** Deletes a stored process version nothing uses (`inbox versions --retire`); `version` is the whole hash. */
  | { readonly kind: 'retire-version'; readonly processKey: string; readonly version: string };

/** One document a repair writes (or, in a preview, would write). */
export interface PlannedWrite {
  readonly path: string;
  readonly op: 'create' | 'set' | 'delete';
  /** Top-level fields whose value changes (set), or all fields (create); empty for delete. */
  readonly fields: readonly string[];
}

/**
 * What a repair acts on, as its transaction read it (engine/repair-basis.ts):
 * a preview returns it, and a confirmation that sends it back (`expect`) is
 * refused if the state changed since. `subject`: token, tokens (an
 * instance a token is added to), incidents or document.
 */
export interface RepairBasisView {
  readonly subject: 'token' | 'tokens' | 'incidents' | 'document' | 'version';
  readonly facts: Readonly<Record<string, string>>;
}

/** What a repair did, or in a preview what it would do: the same transaction, rolled back instead of committed. */
export interface RepairOutcome {
  readonly kind: RepairRequest['kind'];
  readonly preview: boolean;
  /** The document or instance id it changes. */
  readonly target: string;
  /** In words, for a person: "moves token 3f… from Wait for completion to …". */
  readonly summary: string;
  readonly writes: readonly PlannedWrite[];
  /** Found done by an earlier attempt of the same request (never in a preview). */
  readonly alreadyApplied: boolean;
  /** What it acted on, as read; send it back as `expect` to hold the real run to it. Null when already applied. */
  readonly basis: RepairBasisView | null;
  /** The same as one line, for the CLI's `--expect`; null with `basis`. */
  readonly expect: string | null;
  /** New jobs and timers, and how many got their Cloud Task here (0 in a preview). */
  readonly jobs: number;
  readonly timers: number;
  readonly dispatched: number;
  readonly timersDispatched: number;
  readonly by: string;
  readonly at: string;
}

/** One incident of `inbox incidents` and the console's incident list: an instance's incident with the instance it belongs to. */
export interface IncidentRow {
  readonly instanceId: string;
  readonly businessKey: string | null;
  readonly instanceStatus: string;
  readonly reason: string;
  readonly executionId: string | null;
  readonly activityId: string | null;
  readonly message: string;
  /** When the engine raised it. */
  readonly at: string | null;
  /** Null while open. */
  readonly resolvedAt: string | null;
  /** The operator's note on the resolution, or null. */
  readonly resolution: string | null;
}

/** A FAILED job of `inbox incidents`: its retries ran out, its token waits for a repair. */
export interface FailedJobRow {
  readonly id: string;
  readonly processInstanceId: string;
  readonly executionId: string | null;
  readonly activityId: string | null;
  readonly status: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: string | null;
  readonly finishedAt: string | null;
}

/**
 * The open incidents of instances in INCIDENT and those instances' FAILED
 * jobs; with `all`, resolved incidents and every FAILED job too (a FAILED
 * job of an instance whose incidents are resolved is history).
 */
export interface IncidentList {
  readonly incidents: readonly IncidentRow[];
  readonly failedJobs: readonly FailedJobRow[];
}

/** The filters of `inbox waiting` (both optional). */
export interface WaitingFilters {
  /** Only points waiting for this message (a name the deployed models wait for). */
  readonly messageName: string | null;
  /** Only points created at least this long ago, ms. */
  readonly olderThanMs: number | null;
}

/** One token waiting for a message (`inbox waiting`, the console's waiting list). */
export interface WaitingRow {
  readonly instanceId: string;
  /** Null when the instance document is gone (the point outlived it: repair by hand). */
  readonly businessKey: string | null;
  readonly executionId: string;
  readonly activityId: string;
  /** The event-based gateway the point is a branch of, else null. */
  readonly gatewayId: string | null;
  readonly messageName: string;
  readonly correlationKey: string;
  readonly createdAt: string;
  readonly waitingSeconds: number;
  /** The correlationKeys document that holds the point (the only place it is stored). */
  readonly keyDocumentId: string;
}

/** A page of waiting points, the oldest first; `next` is the cursor of the following page, null on the last. */
export interface WaitingPage {
  readonly waitingPoints: readonly WaitingRow[];
  readonly next: string | null;
}

/** One version of a process as the console's migration view offers it (GET /api/versions?process=KEY). */
export interface VersionChoice {
  /** The model's content hash (16 hex digits). */
  readonly version: string;
  /** The process's BPMN name; null when unnamed or not stored. */
  readonly name: string | null;
  /** When a function first ran it (ISO); null when it is not stored. */
  readonly firstDeployedAt: string | null;
  /** Whether processVersions holds its XML: only a stored version can be migrated from or to. */
  readonly stored: boolean;
  /** Whether new instances start on it now. */
  readonly deployed: boolean;
  /** Its RUNNING and INCIDENT instances (exact counts). */
  readonly live: number;
  /** Live tokens of its live instances by element (of the documents read: see `capped`). */
  readonly waiting: Readonly<Record<string, number>>;
}

/** The versions of one process, oldest stored first (`inbox versions PROCESS`'s read). */
export interface ProcessVersionsView {
  readonly processKey: string;
  readonly deployedVersion: string | null;
  /** Whether the read of live instances stopped at its limit: `waiting` then counts part of them. */
  readonly capped: boolean;
  readonly versions: readonly VersionChoice[];
}

/** A flow node of a stored version, as a migration maps tokens (the same kind and scope on both sides). */
export interface VersionElementView {
  readonly id: string;
  readonly name: string | null;
  /** The engine's kind of element (`receiveTask`, `serviceTask`, …): a token moves only to one of the same kind. */
  readonly kind: string;
  /** The embedded subprocess it is drawn in; null at the process level. */
  readonly scope: string | null;
}

/** One stored version with its XML and elements (GET /api/versions/VERSION?process=KEY). */
export interface VersionModelView {
  readonly processKey: string;
  readonly version: string;
  readonly name: string | null;
  readonly deployed: boolean;
  readonly xml: string;
  /** Its flow nodes by id; empty when the stored XML no longer parses. */
  readonly elements: readonly VersionElementView[];
}

/** A token's move in a migration, and what happens to what it waits with (engine/migration/plan.ts TokenMove). */
export interface TokenMoveView {
  readonly executionId: string;
  readonly from: string;
  readonly to: string;
  readonly status: string;
  readonly effects: readonly string[];
}

/** POST /api/migrations's answer (operations/migrate.ts MigrationOutcome has this shape). */
export interface MigrationOutcomeView {
  readonly preview: boolean;
  readonly processKey: string;
  readonly from: string;
  readonly to: string;
  readonly mapping: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly instances: ReadonlyArray<{
    readonly instanceId: string;
    readonly verdict: 'MIGRATED' | 'WOULD_MIGRATE' | 'ALREADY_MIGRATED' | 'REFUSED';
    readonly moves: readonly TokenMoveView[];
    readonly reason: string | null;
    readonly writes: number;
    readonly timersDispatched: number;
  }>;
  /** A preview's line that the run sends back (`--expect`); null for a run. */
  readonly expect: string | null;
  readonly by: string;
}
