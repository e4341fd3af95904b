/**
 * Our engine's visits (outcome.ts), built from the trace events of
 * our-trace.ts. A token's entries follow each other along flows; a token a
 * fork made starts from the fork's visit; a boundary event, a subprocess's
 * start and an event subprocess start paths of their own, as they do in
 * bpmn-engine. A join is one visit: every token entering it waits there
 * (an entry each) until one goes on and the others end, and those visits
 * become the one that went on, with all their arrivals; a join nobody went
 * on from was not passed. A multi-instance activity's item runs a model of
 * its own (bpmn/item-body.ts: `#start`, the activity, `#end`): only what
 * runs inside the activity counts, as bpmn-engine passes the activity once
 * and what is inside it once per item.
 */
import type { FlowNode, ProcessModel } from '../../../functions/src/bpmn/model';
import type { Visit } from './outcome';
import type { TraceEvent } from './our-trace';

const BOUNDARY = new Set(['boundaryTimer', 'boundaryError', 'boundaryEscalation', 'boundaryMessage']);
const GATEWAY = new Set(['parallelGateway', 'inclusiveGateway', 'exclusiveGateway']);

const isJoin = (node: FlowNode | undefined): boolean =>
  (node?.kind === 'parallelGateway' || node?.kind === 'inclusiveGateway') && node.incoming.length > 1;

export class OurVisits {
  private readonly list: { element: string; from: number[]; gone: boolean; join: 'waiting' | 'passed' | null }[] = [];
  /** Each token's current visit, by `instance/token`. */
  private readonly at = new Map<string, number>();
  /** A forked token's first visit comes from its fork's visit. */
  private readonly origin = new Map<string, number>();
  /** Visits of tokens a join consumed, waiting to merge into the one that goes on, by `instance/join`. */
  private readonly consumed = new Map<string, number[]>();
  /** Node entries so far: a guard against a loop within one move. */
  entries = 0;

  /** `modelOf`: a model by its key (one model for the pure core; callers, callees and item bodies for the store). */
  constructor(private readonly modelOf: (key: string) => ProcessModel | null) {}

  /** An item body's own nodes: its start, its end, and the activity itself, which the caller's token passed. */
  private static boilerplate(e: TraceEvent): boolean {
    const at = e.model.indexOf('#');
    return at >= 0 && (e.node.startsWith('#') || e.node === e.model.slice(at + 1));
  }

  on(e: TraceEvent): void {
    if (OurVisits.boilerplate(e)) return;
    const key = `${e.instance}/${e.token}`;
    const node = this.modelOf(e.model)?.nodes[e.node];
    switch (e.kind) {
      case 'create': {
        if (node?.kind === 'eventSubProcess') this.add(e.node, [], null);
        else if (node !== undefined && GATEWAY.has(node.kind)) {
          // The token that forked stands at the gateway now: its visit is the latest there.
          const fork = [...this.at.entries()]
            .filter(([k, v]) => k.startsWith(`${e.instance}/`) && this.list[v]?.element === e.node)
            .map(([, v]) => v)
            .sort((a, b) => b - a)[0];
          if (fork !== undefined) this.origin.set(key, fork);
        }
        return;
      }
      case 'enter': {
        this.entries += 1;
        const current = this.at.get(key);
        // A token waiting at an inclusive join enters it again when the join can go on: the same visit.
        if (current !== undefined && this.list[current]?.element === e.node && isJoin(node)) return;
        const before = current ?? this.origin.get(key);
        const from = before === undefined || (node !== undefined && BOUNDARY.has(node.kind)) ? [] : [before];
        this.at.set(key, this.add(e.node, from, isJoin(node) ? 'waiting' : null));
        return;
      }
      case 'end': {
        const current = this.at.get(key);
        if (e.status !== 'ENDED' || current === undefined || !isJoin(node) || this.list[current]?.element !== e.node)
          return;
        const joinKey = `${e.instance}/${e.node}`;
        this.consumed.set(joinKey, [...(this.consumed.get(joinKey) ?? []), current]);
        return;
      }
      case 'joined': {
        const current = this.at.get(key);
        const visit = current === undefined ? undefined : this.list[current];
        if (visit === undefined) return;
        const joinKey = `${e.instance}/${e.node}`;
        for (const c of this.consumed.get(joinKey) ?? []) {
          const other = this.list[c];
          if (other === undefined) continue;
          visit.from.push(...other.from);
          other.gone = true;
        }
        this.consumed.delete(joinKey);
        visit.join = 'passed';
        return;
      }
    }
  }

  private add(element: string, from: number[], join: 'waiting' | null): number {
    this.list.push({ element, from, gone: false, join });
    return this.list.length - 1;
  }

  /** The visits so far, without merged join arrivals and joins nobody went on from. */
  visits(): Visit[] {
    const kept = new Map<number, number>();
    this.list.forEach((v, i) => {
      if (!v.gone && v.join !== 'waiting') kept.set(i, kept.size);
    });
    return [...kept.keys()].map((i) => {
      const v = this.list[i] as (typeof this.list)[number];
      return { element: v.element, from: v.from.flatMap((f) => (kept.has(f) ? [kept.get(f) as number] : [])) };
    });
  }
}
