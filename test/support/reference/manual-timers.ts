/**
 * bpmn-elements' Timers interface (what a timer event definition and a
 * script register their timeouts with), with timeouts that never run on the
 * clock: the reference driver fires the one a move chooses, so no test
 * waits real time.
 */
export interface TimerRef {
  readonly owner: { readonly id?: string; readonly executionId?: string } | null;
  readonly callback: (...args: unknown[]) => unknown;
  readonly args: unknown[];
}

export class ManualTimers {
  readonly pending: TimerRef[] = [];
  register(owner: TimerRef['owner']) {
    return {
      setTimeout: (callback: TimerRef['callback'], _delay: number, ...args: unknown[]) =>
        this.add(owner, callback, args),
      clearTimeout: (ref: TimerRef) => this.clearTimeout(ref),
    };
  }
  setTimeout = (callback: TimerRef['callback'], _delay: number, ...args: unknown[]): TimerRef =>
    this.add(null, callback, args);
  clearTimeout = (ref: TimerRef | undefined): undefined => {
    const i = ref === undefined ? -1 : this.pending.indexOf(ref);
    if (i >= 0) this.pending.splice(i, 1);
    return undefined;
  };
  get executing(): TimerRef[] {
    return [...this.pending];
  }
  private add(owner: TimerRef['owner'], callback: TimerRef['callback'], args: unknown[]): TimerRef {
    const ref = { owner, callback, args };
    this.pending.push(ref);
    return ref;
  }
}
