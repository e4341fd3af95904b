/** What a chaos run is given and what it returns (run.ts drives it; drive.ts, races.ts and settle.ts share these). */
import type { ApproverTally } from './approver';
import type { ChaosCounts } from './report';
import type { OperatorTally } from './operator';
import type { ChaosSizes } from './plan';
import type { PlannedFault } from './plan-schedule';
import type { VersionCounts } from './versions';

export interface ChaosOptions extends ChaosSizes {
  /** Documents published but not yet stored before publishing pauses (keeps the 2-core machine out of overload). */
  readonly maxBacklog: number;
  /** How long Firestore stays down at each restart, ms (plus the restart itself). */
  readonly downMs: number;
  /** Give up settling after this long, ms. */
  readonly settleTimeoutMs: number;
  readonly progress: (line: string) => void;
}

/** A race as run: when its last tranche was published, relative to its timer's due time (ms; null: never published). */
export interface RaceRun {
  readonly workOrderId: string;
  readonly plannedOffsetMs: number;
  readonly publishedOffsetMs: number | null;
}

export interface ChaosResult {
  readonly line: string;
  readonly ok: boolean;
  readonly counts: ChaosCounts;
  /** Instances per version of each model after the mid-run deploy (versions.ts). */
  readonly versions: VersionCounts;
  readonly faults: ReadonlyArray<PlannedFault & { readonly note: string }>;
  /** Each race as run. */
  readonly races: readonly RaceRun[];
  /** What the operator's repairs came to. */
  readonly operator: OperatorTally;
  /** What the approver's completions of user tasks came to. */
  readonly approver: ApproverTally;
  readonly seconds: number;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
