/**
 * The documents list: the filters of `inbox list`, one page at a time. Only
 * the page is fetched and drawn (50 rows), so 10,000 parked documents cost
 * what 50 do; "next page" follows the server's cursor.
 */
import type { DocumentRow } from '../../functions/src/operations/types';
import { api, type DocumentQuery } from './api';
import { age, h, row, table, time } from './dom';
import { filtersOf, goOnSubmit, pager, textFilter } from './filters';
import { link } from './router';

const FILTERS = ['status', 'reason', 'messageName', 'key', 'olderThan'] as const;
type FilterName = (typeof FILTERS)[number];

function filterForm(current: Partial<Record<FilterName, string>>): HTMLFormElement {
  const status = h(
    'select',
    { name: 'status', testid: 'filter-status' },
    ...['', 'OPEN', 'DONE', 'PARKED'].map((s) =>
      h('option', { value: s, selected: current.status === s }, s === '' ? 'any status' : s),
    ),
  );
  const form = h(
    'form',
    { class: 'filters', testid: 'document-filters' },
    h('label', {}, 'Status ', status),
    textFilter(current, 'reason', 'Reason', 'e.g. AMBIGUOUS'),
    textFilter(current, 'messageName', 'Message', 'a message name of the app', 'app-messages'),
    textFilter(current, 'key', 'Key', 'correlation key'),
    textFilter(current, 'olderThan', 'Older than', 'e.g. 2h, 7d'),
    h('button', { type: 'submit', testid: 'filter-apply' }, 'Filter'),
  );
  return goOnSubmit(form, FILTERS, link.documents);
}

export function documentRow(d: DocumentRow, now: number): HTMLTableRowElement {
  const received = d.receivedAt === null ? null : Date.parse(d.receivedAt);
  return row(
    'document-row',
    [
      h('a', { href: link.document(d.id) }, d.id),
      d.status,
      d.reason ?? '',
      d.messageName ?? '',
      d.correlationKey ?? '',
      String(d.attempts),
      received === null || Number.isNaN(received)
        ? time(d.receivedAt)
        : h('span', { title: d.receivedAt ?? '' }, `${age((now - received) / 1000)} ago`),
      d.error ?? '',
    ],
    { 'data-id': d.id, 'data-status': d.status },
  );
}

export const DOCUMENT_HEADERS = ['Id', 'Status', 'Reason', 'Message', 'Key', 'Attempts', 'Received', 'Error'];

export async function renderDocuments(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters = filtersOf(params, FILTERS);
  const after = params.get('after');
  const query: DocumentQuery = filters;
  const page = await api.documents(query, after);
  const now = Date.now();
  main.replaceChildren(
    h('h1', {}, 'Documents'),
    filterForm(filters),
    h(
      'p',
      { class: 'page-info', testid: 'page-info' },
      `${page.documents.length} on this page${after === null ? '' : ', after ' + after}`,
    ),
    table(
      'documents',
      DOCUMENT_HEADERS,
      page.documents.map((d) => documentRow(d, now)),
      'No documents match.',
    ),
    pager(filters, after, page.next, link.documents),
  );
}
