/**
 * What waits for the reference driver in bpmn-engine: the jobs (service
 * calls whose callback is kept) and the user tasks (their `activity.wait`
 * api), each with the executions it runs inside, so that whatever ends them
 * without an event of their own takes them along: a multi-instance
 * activity's end (its items are `${executionId}_${index}`), a called process
 * discarded with its interrupted call activity, a terminate end event.
 */
export interface Wait {
  readonly element: string;
  readonly executionId: string;
  /** The executions it runs inside (its subprocess, its process, …). */
  readonly within: readonly string[];
}

export interface PendingJob extends Wait {
  readonly callback: (err: Error | null, result?: unknown) => void;
}

export interface PendingUser extends Wait {
  readonly signal: (message?: unknown) => void;
}

export class ReferenceWaits {
  readonly jobs: PendingJob[] = [];
  readonly users: PendingUser[] = [];

  /** The first job (or user task) at `element`, taken off the list: items go lowest index first, as they started. */
  take<T extends Wait>(list: T[], element: string): T | undefined {
    const i = list.findIndex((w) => w.element === element);
    return i < 0 ? undefined : list.splice(i, 1)[0];
  }

  /** An activity or a process left: its waits go, its items' (`${executionId}_${index}`), and those inside it. */
  left(executionId: string): void {
    this.drop(
      (w) =>
        w.executionId === executionId || w.executionId.startsWith(`${executionId}_`) || w.within.includes(executionId),
    );
  }

  /** Every wait at `element` goes (a terminate end event's stop names the element only; no element is reached by two tokens at once). */
  stopped(element: string): void {
    this.drop((w) => w.element === element);
  }

  private drop(gone: (w: Wait) => boolean): void {
    for (const list of [this.users, this.jobs] as Wait[][])
      for (let i = list.length - 1; i >= 0; i--) if (gone(list[i] as Wait)) list.splice(i, 1);
  }
}
