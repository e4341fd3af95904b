import { status } from '@grpc/grpc-js';

/**
 * Fault injection for chaos tests. Programmatic only: nothing here is
 * reachable over gRPC, so a client can never switch faults on by accident.
 */

/**
 * How an injected dispatch attempt fails, without the target being called:
 * an HTTP status the "target" answered (e.g. 503, 429, 500), or
 * `'connection-refused'` (no response at all).
 */
export type DispatchFault = number | 'connection-refused';

/** What a dispatch filter sees of an attempt. */
export interface DispatchAttemptInfo {
  /** Full task name. */
  readonly task: string;
  /** Full queue name. */
  readonly queue: string;
  readonly url: string;
  /** 1-based attempt number of this task. */
  readonly attempt: number;
}

/** Selects the attempts a {@link Faults.failDispatches} rule applies to. */
export type DispatchFilter = (attempt: DispatchAttemptInfo) => boolean;

interface DispatchRule {
  remaining: number; // Infinity for filter rules
  readonly filter: DispatchFilter;
  readonly fault: DispatchFault;
}

/** Pending faults of one emulator. */
export class Faults {
  private readonly createTaskCodes: status[] = [];
  private readonly dispatchRules: DispatchRule[] = [];

  /** The next `count` CreateTask calls fail with `code` (nothing is created). */
  failNextCreateTask(count = 1, code: status = status.UNAVAILABLE): void {
    for (let i = 0; i < count; i++) this.createTaskCodes.push(code);
  }

  /** The code the current CreateTask call must fail with, if any (consumes it). */
  takeCreateTaskFailure(): status | undefined {
    return this.createTaskCodes.shift();
  }

  /**
   * Makes dispatch attempts fail with `fault` instead of calling the target:
   * with a number, the next `rule` attempts (of any task); with a filter,
   * every attempt it accepts until the returned function is called. Failed
   * attempts count and are retried exactly as real failures.
   */
  failDispatches(rule: number | DispatchFilter, fault: DispatchFault = 503): () => void {
    const entry: DispatchRule =
      typeof rule === 'number'
        ? { remaining: rule, filter: () => true, fault }
        : { remaining: Infinity, filter: rule, fault };
    this.dispatchRules.push(entry);
    return () => {
      const i = this.dispatchRules.indexOf(entry);
      if (i >= 0) this.dispatchRules.splice(i, 1);
    };
  }

  /** The fault for this attempt, if a rule applies (consumes one use of a counted rule). */
  takeDispatchFault(info: DispatchAttemptInfo): DispatchFault | undefined {
    const rule = this.dispatchRules.find((r) => r.remaining > 0 && r.filter(info));
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.dispatchRules.splice(this.dispatchRules.indexOf(rule), 1);
    return rule.fault;
  }

  /** Drops every pending fault. */
  clear(): void {
    this.createTaskCodes.length = 0;
    this.dispatchRules.length = 0;
  }
}
