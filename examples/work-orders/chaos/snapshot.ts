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
    readonly businessKey: string;
    readonly status: string;
    readonly correlatedMessages: readonly string[];
    /** Its tokens (live and the last ended ones) and their status. */
    readonly tokens: ReadonlyArray<{ readonly id: string; readonly status: string }>;
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
}
