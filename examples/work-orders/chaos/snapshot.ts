/** What a chaos run's evaluation reads of the store (observe.ts reads it; evaluate.ts judges it). */

export interface ChaosInboxDoc {
  readonly id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly processInstanceId: string | null;
  readonly deadLettered: boolean;
  readonly requeued: boolean;
}

export interface ChaosSnapshot {
  readonly inbox: readonly ChaosInboxDoc[];
  readonly instances: ReadonlyArray<{
    readonly id: string;
    /** Its model: work-order-execution (the first) or work-order-inspection (the second). */
    readonly processKey: string;
    /** The version it runs on (its model's content hash). */
    readonly processVersion: string;
    readonly businessKey: string;
    readonly status: string;
    readonly correlatedMessages: readonly string[];
    /** Who called it: an item of a multi-instance activity has its caller's business key, the activity and its index and batch; null at the top level. */
    readonly calledBy: {
      readonly instanceId: string;
      readonly activityId: string;
      readonly index: number | null;
      readonly batch: string | null;
    } | null;
    /** Why its caller terminated it (an item still running when the completion condition held), or null. */
    readonly terminated: string | null;
    /** Its variables as they are now. */
    readonly variables: Readonly<Record<string, unknown>>;
    /** Its tokens (live and the last ended ones), their status and where they are or ended. */
    readonly tokens: ReadonlyArray<{ readonly id: string; readonly status: string; readonly activityId: string }>;
    /** Its jobs (the live ones and the last finished ones): which step, how they ended. */
    readonly jobs: ReadonlyArray<{
      readonly activityId: string;
      readonly status: string;
      readonly lastError: string | null;
      /** When it finished, ms since the epoch; null while PENDING. */
      readonly finishedAt: number | null;
    }>;
    /** Its repair records: which repair, on which token. */
    readonly repairs: ReadonlyArray<{ readonly kind: string; readonly executionId: string | null }>;
  }>;
  /** Jobs of the "Create invoice" step that billed or may bill (not those ended stale when a repair moved their token). */
  readonly invoiceJobs: ReadonlyArray<{ readonly processInstanceId: string }>;
  readonly invoices: ReadonlyArray<{ readonly workOrderId: string; readonly processInstanceId: string }>;
  /** Timer documents (cancelled timers are deleted, so they are not here). */
  readonly timers: ReadonlyArray<{
    readonly processInstanceId: string;
    readonly activityId: string;
    readonly status: string;
  }>;
  /** Overdue records (`escalations/`), one per escalateOverdueWorkOrder job. */
  readonly escalations: ReadonlyArray<{ readonly workOrderId: string; readonly processInstanceId: string }>;
  /** User tasks (`userTasks/`): open, completed (by which request) or cancelled. */
  readonly userTasks: ReadonlyArray<{
    readonly id: string;
    readonly processInstanceId: string;
    readonly activityId: string;
    readonly status: string;
    readonly completionRequestId: string | null;
    readonly completedBy: string | null;
    readonly cancelReason: string | null;
  }>;
  /** Defect records (`defects/`), one per round of a work order's inspection loop: the round that found `findingsLeft`. */
  readonly defects: ReadonlyArray<{
    readonly workOrderId: string;
    readonly processInstanceId: string;
    readonly findingsLeft: number;
  }>;
  /** Counting documents of multi-instance activities (`itemBatches/`) still there: an activity that ended deletes its own. */
  readonly itemBatches: ReadonlyArray<{ readonly id: string; readonly batch: string }>;
}
