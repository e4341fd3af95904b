/**
 * A migration's answer (POST /api/migrations) as a table: per instance its
 * verdict, each token's move with what happens to what it waits with, or
 * the reason it was refused; and a line that sums the verdicts.
 */
import type { MigrationOutcomeView } from '../../functions/src/operations/types';
import { h, row, table } from './dom';
import { link } from './router';

type Verdict = MigrationOutcomeView['instances'][number]['verdict'];

const WORDS: Readonly<Record<Verdict, string>> = {
  WOULD_MIGRATE: 'would migrate',
  MIGRATED: 'migrated',
  ALREADY_MIGRATED: 'already migrated',
  REFUSED: 'refused',
};

/** How many instances got `verdict`. */
export const countOf = (outcome: MigrationOutcomeView, verdict: Verdict): number =>
  outcome.instances.filter((i) => i.verdict === verdict).length;

/** "2 would migrate, 1 refused" (the verdicts that occur, in a fixed order). */
export function summaryOf(outcome: MigrationOutcomeView): string {
  const parts = (Object.keys(WORDS) as Verdict[])
    .map((v) => [countOf(outcome, v), WORDS[v]] as const)
    .filter(([n]) => n > 0)
    .map(([n, words]) => `${n} ${words}`);
  return parts.length === 0 ? 'No live instance of this version to migrate.' : `${parts.join(', ')}.`;
}

function movesCell(i: MigrationOutcomeView['instances'][number]): HTMLElement {
  if (i.verdict === 'REFUSED') return h('span', { class: 'refused', testid: 'migration-reason' }, i.reason ?? '');
  return h(
    'ul',
    { class: 'moves' },
    ...i.moves.map((m) =>
      h(
        'li',
        { testid: 'migration-move', 'data-from': m.from, 'data-to': m.to },
        h('code', {}, m.executionId),
        ` ${m.from} → ${m.to} (${m.status})`,
        m.effects.length === 0 ? '' : `: ${m.effects.join('; ')}`,
      ),
    ),
  );
}

/** The table of `outcome`, rows `${testid}-row` carrying data-id and data-verdict. */
export function outcomeTable(outcome: MigrationOutcomeView, testid: string): HTMLElement {
  return h(
    'div',
    { testid },
    h('p', { class: 'summary', testid: `${testid}-summary` }, summaryOf(outcome)),
    table(
      `${testid}-table`,
      ['Instance', 'Verdict', 'Moves, or why not'],
      outcome.instances.map((i) =>
        row(`${testid}-row`, [h('a', { href: link.instance(i.instanceId) }, i.instanceId), i.verdict, movesCell(i)], {
          'data-id': i.instanceId,
          'data-verdict': i.verdict,
          class: i.verdict === 'REFUSED' ? 'alert' : undefined,
        }),
      ),
      'No instance.',
    ),
  );
}
