/**
 * bpmn-engine's visits (outcome.ts), from its listener's events: a visit per
 * activity run (`activity.start`), linked to the runs whose taken flows led
 * there (an inbound flow's `evaluationId` is its source run's execution
 * id); a boundary event is passed only when it is triggered (it starts,
 * and waits, with its activity). A join that goes on with a discarded flow
 * among its arrivals is noted (known.ts, join-counts-discarded-flow).
 */
import type { Visit } from './outcome';

export interface Api {
  readonly id: string;
  readonly type: string;
  readonly executionId: string;
  readonly content: {
    readonly inbound?: readonly {
      readonly action?: string;
      readonly evaluationId?: string;
      readonly id?: string;
      readonly discardSequence?: readonly string[];
    }[];
    readonly isMultiInstance?: boolean;
    readonly parent?: Parent;
  };
}

export interface Parent {
  readonly executionId?: string;
  readonly path?: readonly { readonly executionId?: string }[];
}

/** The executions an activity runs inside (its subprocess, its process, …): a called process's waits go with it. */
export const ancestors = (parent: Parent | undefined): string[] =>
  [parent?.executionId, ...(parent?.path ?? []).map((p) => p.executionId)].filter(
    (id): id is string => id !== undefined,
  );

export class ReferenceVisits {
  private readonly list: Visit[] = [];
  private readonly byExecution = new Map<string, number>();
  /** Boundary events waiting with their activity (their end event names the event definition's type, not theirs). */
  private readonly boundaryRuns = new Set<string>();
  /** Joins that went on counting a discarded flow as arrived (`discard into J from A>B`, the discard's way). */
  readonly discards: string[] = [];

  started(api: Api): void {
    if (api.type === 'bpmn:BoundaryEvent') return void this.boundaryRuns.add(api.executionId);
    if (this.byExecution.has(api.executionId)) return;
    const inbound = api.content.inbound ?? [];
    if (inbound.some((f) => f.action === 'take'))
      for (const f of inbound)
        if (f.action === 'discard')
          this.discards.push(`discard into ${api.id} from ${(f.discardSequence ?? []).join('>')}`);
    const from = inbound.flatMap((flow) => {
      const source = flow.action === 'take' ? this.byExecution.get(flow.evaluationId ?? '') : undefined;
      return source === undefined ? [] : [source];
    });
    this.add(api, from);
  }

  ended(api: Api): void {
    if (this.boundaryRuns.delete(api.executionId)) this.add(api, []);
  }

  private add(api: Api, from: number[]): void {
    this.list.push({ element: api.id, from });
    this.byExecution.set(api.executionId, this.list.length - 1);
  }

  visits(): Visit[] {
    return this.list.map((v) => ({ element: v.element, from: [...v.from] }));
  }
}
