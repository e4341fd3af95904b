/**
 * The comparison's view of where tokens went, free of either engine's token
 * identity. Each engine's driver reports visits (an element passed, and the
 * visits whose flows led there); here they become paths: a path runs from a
 * visit along single flows, and ends where a visit forks (two or more
 * flows leave it), where flows join (two or more arrive), or where nothing
 * leaves. The multiset of paths, each the element ids in order, says which
 * elements were passed how often and in which order along each sequence of
 * flows, whatever order the engines ran concurrent paths in.
 */
import type { Visit } from './outcome';

/** The paths of a visit graph, each `a>b>c`, sorted. */
export function paths(visits: readonly Visit[]): string[] {
  const next = visits.map((): number[] => []);
  visits.forEach((v, i) => {
    for (const f of v.from) next[f]?.push(i);
  });
  const single = (i: number): number | null => {
    const out = next[i] ?? [];
    const [only] = out;
    return out.length === 1 && only !== undefined && visits[only]?.from.length === 1 ? only : null;
  };
  const found: string[] = [];
  visits.forEach((v, i) => {
    const [only] = v.from;
    if (v.from.length === 1 && only !== undefined && single(only) === i) return; // continues a path
    const elements = [v.element];
    for (let at = single(i), guard = 0; at !== null && guard < visits.length; at = single(at), guard++)
      elements.push((visits[at] as Visit).element);
    found.push(elements.join('>'));
  });
  return found.sort();
}

/** How often each element was passed, `element×n`, sorted by element. */
export function passes(visits: readonly Visit[]): string[] {
  const count = new Map<string, number>();
  for (const v of visits) count.set(v.element, (count.get(v.element) ?? 0) + 1);
  return [...count.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([e, n]) => (n === 1 ? e : `${e}×${n}`));
}

/** The difference of two sorted multisets: what only `a` has and what only `b` has. */
export function multisetDiff(a: readonly string[], b: readonly string[]): { onlyA: string[]; onlyB: string[] } {
  const rest = new Map<string, number>();
  for (const x of b) rest.set(x, (rest.get(x) ?? 0) + 1);
  const onlyA: string[] = [];
  for (const x of a) {
    const n = rest.get(x) ?? 0;
    if (n > 0) rest.set(x, n - 1);
    else onlyA.push(x);
  }
  const onlyB = [...rest.entries()].flatMap(([x, n]) => Array<string>(n).fill(x));
  return { onlyA, onlyB: onlyB.sort() };
}
