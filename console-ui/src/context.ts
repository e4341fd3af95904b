/** What every view gets: who is looking, and how to render itself again after a repair. */
import type { Whoami } from './api';

export interface ViewContext {
  readonly session: Whoami;
  /** Renders the current route again (after a confirmed repair). */
  readonly reload: () => void;
}

/** Repair buttons are shown to repairers only; a viewer sees the reason instead (main.ts). */
export function mayRepair(ctx: ViewContext): boolean {
  return ctx.session.role === 'repairer';
}
