/**
 * What `inbox explain ID` reads about one inbox document and what it
 * answers: the facts (explain-facts.ts reads them) and the explanation
 * (explain.ts derives it, pure).
 */

/** A token of an instance, as explain shows it. */
export interface TokenFact {
  readonly executionId: string;
  readonly activityId: string;
  readonly status: string;
  readonly waitingFor: { readonly messageName: string; readonly correlationKey: string } | null;
  readonly jobId: string | null;
  /** WAITING_USER: the user task; WAITING_CALL: the called instance; WAITING_JOIN: the flow it arrived by; else null. */
  readonly waitsOn: string | null;
}

/** The process version an instance runs on (engine/store/versions.ts). */
export interface VersionFact {
  /** Its process key (an item instance's is `PROCESS#ACTIVITY`). */
  readonly processKey: string;
  /** Its processVersion, the model's content hash. */
  readonly version: string;
  /** The version new instances of the process start on now; null when the app does not deploy it (or its models could not be loaded). */
  readonly deployedVersion: string | null;
  /** Whether processVersions holds it; one that is not runs on the deployed model. */
  readonly stored: boolean;
}

/** A process instance related to the document's key. */
export interface InstanceFact {
  readonly id: string;
  readonly businessKey: string;
  readonly status: string;
  readonly completedAt: Date | null;
  /** Its active tokens. */
  readonly tokens: readonly TokenFact[];
  /** Reasons of its open incidents. */
  readonly openIncidents: readonly string[];
  /** The version it runs on; absent or null when its document names none. */
  readonly version?: VersionFact | null;
}

/** The inbox document's fields explain reads (Timestamps as Dates). */
export interface ExplainedDoc {
  readonly status: string;
  readonly reason: string | null;
  readonly messageName: string | null;
  readonly correlationKey: string | null;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly receivedAt: Date | null;
  readonly requeuedAt: Date | null;
  readonly parkedAt: Date | null;
  readonly lastError: string | null;
  readonly validationError: string | null;
  readonly collidesWith: string | null;
  readonly deliveryCount: number | null;
  readonly sourceSubscription: string | null;
  readonly processInstanceId: string | null;
  readonly processedAt: Date | null;
  readonly correlatedVia: string | null;
  readonly expireAt: Date | null;
  /** DONE with an offloaded payload or raw bytes in chunks: when the payload sweep deletes its object or chunks, then the document (instead of expireAt). */
  readonly payloadExpireAt?: Date | null;
  /** How many `rawChunks` documents hold its raw bytes (0 or absent: none). */
  readonly rawDataChunks?: number;
  /** DONE with an offloaded payload: the instance that may still read it, and its status; the payload sweep keeps both until it completes. Null or absent: none. */
  readonly keptFor?: { readonly processInstanceId: string; readonly instanceStatus: string } | null;
  /** The sender's claim-check reference (`reference.uri`), or null. */
  readonly referenceUri?: string | null;
  /** Where the receiver put an offloaded payload (`offloaded.uri`), or null. */
  readonly offloadedUri?: string | null;
  /** PARKED: what the relay recorded with the reason (`parkDetails`; ALREADY_STARTED: the instance). */
  readonly parkDetails?: Readonly<Record<string, unknown>> | null;
  /** DONE by `inbox repair dismiss`: who, when, why, and the reason it was parked for. */
  readonly dismissed?: {
    readonly by: string;
    readonly at: Date | null;
    readonly note: string;
    readonly previousReason: string | null;
  } | null;
}

/** The message start event the document's name has in the deployed models, and the instance it starts for the document's key. */
export interface StartFact {
  readonly processKey: string;
  readonly activityId: string;
  /** instanceId(processKey, correlationKey): one instance per business key. */
  readonly instanceId: string;
}

/** A waiting point for the document's message and key. */
export interface WaitingFact {
  readonly processInstanceId: string;
  readonly executionId: string;
  readonly activityId: string;
}

export interface ExplainFacts {
  readonly id: string;
  readonly doc: ExplainedDoc;
  /** Tokens that wait for this message name under this key. */
  readonly waiting: readonly WaitingFact[];
  /** The older OPEN document of the same key that goes first, if any (OPEN documents only). */
  readonly heldBehind: { readonly id: string; readonly nextAttemptAt: Date | null } | null;
  /** Instances that wait under the key, have it as business key, or took the document. */
  readonly instances: readonly InstanceFact[];
  /** How long a message may wait for its waiting point (INBOX_BUFFER_WINDOW_MS). */
  readonly bufferWindowMs: number;
  /** Its name's message start event, if it has one (absent or null: none). */
  readonly start?: StartFact | null;
}

export interface Explanation {
  readonly id: string;
  readonly status: string;
  readonly reason: string | null;
  /** One line: where it is. */
  readonly summary: string;
  /** Why, one fact a line. */
  readonly because: readonly string[];
  /** What to do: commands to run (from the runbook) or words. Empty: nothing to do. */
  readonly next: readonly string[];
  /** OPEN: when the relay looks at it next (null: due now). */
  readonly nextAttemptAt: Date | null;
  /** OPEN: when it is parked NO_WAITING_INSTANCE if still nobody waits. */
  readonly parkedFromIfUnclaimed: Date | null;
  readonly heldBehind: ExplainFacts['heldBehind'];
  readonly waiting: readonly WaitingFact[];
  readonly instances: readonly InstanceFact[];
  /** The version each instance runs on, in words (one line per instance that names one). */
  readonly versions?: readonly string[];
}
