/**
 * The tokens waiting for a message (`inbox waiting`), the oldest first, one
 * page at a time, filtered by message and age: the overview's "waiting too
 * long" figures link here with the alert's threshold as the age.
 */
import type { WaitingRow } from '../../functions/src/operations/types';
import { api } from './api';
import { age, h, row, table, time } from './dom';
import { filtersOf, goOnSubmit, pager, textFilter } from './filters';
import { link } from './router';

const FILTERS = ['message', 'olderThan'] as const;
type FilterName = (typeof FILTERS)[number];

function filterForm(current: Partial<Record<FilterName, string>>): HTMLFormElement {
  const form = h(
    'form',
    { class: 'filters', testid: 'waiting-filters' },
    textFilter(current, 'message', 'Message', 'a message name the models wait for', 'app-messages'),
    textFilter(current, 'olderThan', 'Waiting longer than', 'e.g. 2h, 7d'),
    h('button', { type: 'submit', testid: 'filter-apply' }, 'Filter'),
  );
  return goOnSubmit(form, FILTERS, link.waiting);
}

function waitingRow(w: WaitingRow): HTMLTableRowElement {
  return row(
    'waiting-point-row',
    [
      h('a', { href: link.instance(w.instanceId), testid: 'waiting-instance' }, w.instanceId),
      w.businessKey ?? '(no instance)',
      w.activityId,
      w.messageName,
      h(
        'a',
        { href: link.documents({ key: w.correlationKey }), title: 'the inbox documents of this key' },
        w.correlationKey,
      ),
      time(w.createdAt),
      age(w.waitingSeconds),
    ],
    { 'data-instance-id': w.instanceId, 'data-message-name': w.messageName },
  );
}

export async function renderWaiting(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters = filtersOf(params, FILTERS);
  const after = params.get('after');
  const page = await api.waiting(filters, after);
  const what = [
    filters.message === undefined ? 'a message' : filters.message,
    filters.olderThan === undefined ? '' : `, longer than ${filters.olderThan}`,
  ].join('');
  main.replaceChildren(
    h('h1', {}, `Tokens waiting for ${what}`),
    filterForm(filters),
    h(
      'p',
      { class: 'page-info', testid: 'page-info' },
      `${page.waitingPoints.length} on this page, the longest waiting first`,
    ),
    table(
      'waiting-points',
      ['Instance', 'Business key', 'Activity', 'Message', 'Correlation key', 'Waiting since', 'Waited'],
      page.waitingPoints.map(waitingRow),
      'No token waits like that.',
    ),
    pager(filters, after, page.next, link.waiting),
  );
}
