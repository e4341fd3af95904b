/**
 * Questions known.ts asks of a run to recognise a difference by its shape:
 * what each side passed, what only one did, where bpmn-engine stalled,
 * where our incidents are, and how the drawn model's elements relate.
 */
import type { RunResult } from './compare';
import type { GraphNode, NodeKind } from './graph';
import { multisetDiff } from './visits';

/** An entry of known.ts: a difference the test tolerates, recognised by `matches`. */
export interface KnownDifference {
  readonly id: string;
  readonly kind: 'A' | 'B' | 'C';
  /** What it explains: a difference between the engines (the default), or an inconsistency of ours alone. */
  readonly explains?: 'difference' | 'inconsistency';
  /** One line: why the engines differ here. */
  readonly reason: string;
  readonly matches: (result: RunResult) => boolean;
}

/** The elements a side passed (every element of its paths). */
export function passed(result: RunResult, side: 'ours' | 'reference'): Set<string> {
  const s = result[side];
  return new Set((s?.paths ?? []).flatMap((p) => p.split('>')));
}

export const nodes = (result: RunResult, ...kinds: NodeKind[]): GraphNode[] =>
  result.graph.nodes.filter((n) => kinds.includes(n.kind));

/** The start event of event subprocess `esp`. */
export const startOf = (result: RunResult, esp: string): GraphNode | undefined =>
  result.graph.nodes.find((n) => n.scope === esp && n.kind === 'espStart');

/** Elements on the paths only one side has. */
export function differingElements(result: RunResult): Set<string> {
  const { onlyA, onlyB } = multisetDiff(result.ours?.paths ?? [], result.reference?.paths ?? []);
  return new Set([...onlyA, ...onlyB].flatMap((p) => p.split('>')));
}

/** The elements bpmn-engine stalled at (nothing waits, yet it is not done): a postponed flow's target, or a postponed element. */
export function stalledJoins(result: RunResult): Set<string> {
  const line = (result.reference?.end.detail ?? []).find((d) => d.startsWith('stalled: '));
  if (line === undefined) return new Set();
  const ids = line.slice('stalled: '.length).split(', ');
  return new Set(ids.map((id) => result.graph.flows.find((f) => f.id === id)?.target ?? id));
}

/** Whether element `id` is drawn inside `scope`, at any depth. */
export function isInside(result: RunResult, id: string, scope: string): boolean {
  for (
    let at = result.graph.nodes.find((n) => n.id === id)?.scope ?? null, depth = 0;
    at !== null && depth < 50;
    depth++
  ) {
    if (at === scope) return true;
    at = result.graph.nodes.find((n) => n.id === at)?.scope ?? null;
  }
  return false;
}

/** Whether `to` is reachable from `from` along sequence flows (or is it). */
export function reaches(result: RunResult, from: string, to: string): boolean {
  const seen = new Set<string>();
  for (const pending = [from]; pending.length > 0;) {
    const id = pending.pop() as string;
    if (id === to) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const f of result.graph.flows) if (f.source === id) pending.push(f.target);
  }
  return false;
}

/** Elements (with repeats) one side passed and the other did not: `onlyA` ours, `onlyB` bpmn-engine's. */
export function extraPasses(result: RunResult): { onlyA: string[]; onlyB: string[] } {
  const elements = (paths: readonly string[]) => paths.flatMap((p) => p.split('>')).sort();
  return multisetDiff(elements(result.ours?.paths ?? []), elements(result.reference?.paths ?? []));
}

export const oursIncident = (result: RunResult, reason: string): string[] =>
  (result.ours?.end.detail ?? []).flatMap((d) => {
    const m = new RegExp(`^${reason} at (\\S+):`).exec(d);
    return m === null ? [] : [m[1] as string];
  });
