/**
 * The mapping of a migration, as the operator sets it: one row per element
 * the live tokens of the instances sit at, with a select of the target
 * version's elements of the same kind (a token never changes kind),
 * defaulting to the element with the same id when the target has one. What
 * it reads back is `inbox migrate`'s `--map`: only the elements that move to
 * another id (the others keep theirs).
 */
import type { VersionElementView } from '../../functions/src/operations/types';
import { h, row, table } from './dom';

export interface MappingTable {
  readonly element: HTMLElement;
  /** Source id → target id for the rows whose target has another id (`--map`). */
  mapping(): Record<string, string>;
  /** The source elements whose row has no target chosen. */
  unmapped(): string[];
}

const label = (e: VersionElementView): string => (e.name === null ? e.id : `${e.name} (${e.id})`);

/** The table of `waiting` (element id → live tokens there); `onChange` after any select changes. */
export function mappingTable(
  source: readonly VersionElementView[],
  target: readonly VersionElementView[],
  waiting: Readonly<Record<string, number>>,
  onChange: () => void,
): MappingTable {
  const selects = new Map<string, HTMLSelectElement>();
  const rows = Object.entries(waiting)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, tokens]) => {
      const kind = source.find((e) => e.id === id)?.kind ?? null;
      const choices = target.filter((e) => kind === null || e.kind === kind);
      const same = choices.some((e) => e.id === id);
      const select = h(
        'select',
        { testid: `mapping-target-${id}`, 'data-source': id },
        h('option', { value: '', selected: !same }, choices.length === 0 ? '(no element of this kind)' : '(choose)'),
        ...choices.map((e) => h('option', { value: e.id, selected: e.id === id }, label(e))),
      );
      select.addEventListener('change', onChange);
      selects.set(id, select);
      return row('mapping-row', [h('code', {}, id), kind ?? '—', String(tokens), select], { 'data-source': id });
    });
  return {
    element: table(
      'mapping',
      ['Element (source)', 'Kind', 'Live tokens', 'Moves to (target)'],
      rows,
      'No live token of these instances: nothing to map.',
    ),
    mapping: () => {
      const out: Record<string, string> = {};
      for (const [id, select] of selects) if (select.value !== '' && select.value !== id) out[id] = select.value;
      return out;
    },
    unmapped: () => [...selects].filter(([, s]) => s.value === '').map(([id]) => id),
  };
}
