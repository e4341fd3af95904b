/**
 * Instances: those of a business key (a search box), or those of one
 * process version (the version filter: process, version, and a status if
 * wanted), a page at a time. Each row shows the version it runs on; a
 * repairer gets the migration view of the version's live instances.
 */
import type { InstanceRow } from '../../functions/src/operations/types';
import { api } from './api';
import { mayRepair, type ViewContext } from './context';
import { h, row, table, time } from './dom';
import { filtersOf, goOnSubmit, pager, textFilter } from './filters';
import { link } from './router';
import { shortVersion, versionLink } from './version';

const VERSION_FILTERS = ['process', 'version', 'status'] as const;
type VersionFilter = (typeof VERSION_FILTERS)[number];
const STATUSES = ['RUNNING', 'INCIDENT', 'COMPLETED'] as const;

function searchBox(current: string): HTMLFormElement {
  const input = h('input', {
    name: 'businessKey',
    value: current,
    placeholder: 'business key',
    testid: 'instances-search',
    autofocus: true,
  });
  const form = h(
    'form',
    { class: 'search' },
    h('label', {}, 'Business key ', input),
    h('button', { type: 'submit', testid: 'instances-search-submit' }, 'Find'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = link.instances(input.value.trim());
  });
  return form;
}

/** The version filter: a process key, a version (as an instance's page shows it, whole), and a status or any. */
function versionForm(current: Partial<Record<VersionFilter, string>>): HTMLFormElement {
  const status = h(
    'select',
    { name: 'status', testid: 'filter-status' },
    h('option', { value: '', selected: current.status === undefined }, 'any status'),
    ...STATUSES.map((s) => h('option', { value: s, selected: current.status === s }, s.toLowerCase())),
  );
  const form = h(
    'form',
    { class: 'filters', testid: 'version-filters' },
    textFilter(current, 'process', 'Process', 'a process key'),
    textFilter(current, 'version', 'Version', '16 hex digits'),
    h('label', {}, 'Status ', status),
    h('button', { type: 'submit', testid: 'filter-apply' }, 'Filter'),
    h('span', { class: 'note' }, "An instance's page shows its version; its link lists the others of that version."),
  );
  return goOnSubmit(form, VERSION_FILTERS, link.versionInstances);
}

function instanceRow(i: InstanceRow): HTMLTableRowElement {
  return row(
    'instance-row',
    [
      h('a', { href: link.instance(i.id) }, i.id),
      i.processKey,
      versionLink(i.processKey, i.processVersion, 'instance-version'),
      i.status,
      time(i.createdAt),
      String(i.activeTokens),
      String(i.openIncidents),
    ],
    {
      'data-id': i.id,
      'data-version': i.processVersion ?? undefined,
      class: i.openIncidents > 0 ? 'alert' : undefined,
    },
  );
}

const HEADERS = ['Id', 'Process', 'Version', 'Status', 'Created', 'Active tokens', 'Open incidents'];

export async function renderInstances(
  main: HTMLElement,
  params: URLSearchParams,
  context: Promise<ViewContext>,
): Promise<void> {
  const key = params.get('businessKey')?.trim() ?? '';
  const filters = filtersOf(params, VERSION_FILTERS);
  const after = params.get('after');
  if (key !== '') {
    const { instances } = await api.instances({ businessKey: key, ...filters }, null);
    main.replaceChildren(
      h('h1', {}, 'Instances of ', h('code', {}, key)),
      searchBox(key),
      versionForm(filters),
      table('instances', HEADERS, instances.map(instanceRow), `No instance has the business key ${key}.`),
    );
    return;
  }
  const { process, version } = filters;
  if (process === undefined || version === undefined) {
    main.replaceChildren(
      h('h1', {}, 'Instances'),
      searchBox(''),
      versionForm(filters),
      h(
        'p',
        { class: process === undefined && version === undefined ? 'empty' : 'error', testid: 'instances-hint' },
        process === undefined && version === undefined
          ? 'Enter a business key (the correlation key of its messages), or a process and one of its versions.'
          : 'The version filter takes both a process and a version.',
      ),
    );
    return;
  }
  const [page, ctx] = await Promise.all([api.instances(filters, after), context]);
  main.replaceChildren(
    h(
      'h1',
      {},
      'Instances of ',
      h('code', {}, process),
      ' at version ',
      h('code', { title: version, testid: 'instances-version' }, shortVersion(version)),
      filters.status === undefined ? '' : `, ${filters.status.toLowerCase()}`,
    ),
    searchBox(''),
    versionForm(filters),
    ...(mayRepair(ctx)
      ? [
          h(
            'div',
            { class: 'actions' },
            h(
              'a',
              { href: link.migrate({ process, from: version }), testid: 'migrate-version' },
              'Migrate instances of this version…',
            ),
          ),
        ]
      : []),
    h('p', { class: 'page-info', testid: 'page-info' }, `${page.instances.length} on this page, in id order`),
    table('instances', HEADERS, page.instances.map(instanceRow), `No instance of ${process} runs on this version.`),
    pager(filters, after, page.next, link.versionInstances),
  );
}
