/**
 * The user tasks (`inbox tasks list`): the open ones by default, the oldest
 * first, one page at a time, filtered by one of assignee, candidate group
 * and instance (the API takes at most one). Each links to its task, where
 * it is completed, and to its instance.
 */
import { api } from './api';
import { h, row, table, time } from './dom';
import { filtersOf, goOnSubmit, pager, textFilter } from './filters';
import { link } from './router';
import type { UserTask } from './task-types';

const FILTERS = ['status', 'assignee', 'group', 'instance'] as const;
type FilterName = (typeof FILTERS)[number];
/** The filters of which the API takes one at a time. */
const ONE_OF = ['assignee', 'group', 'instance'] as const;

const STATUSES = ['OPEN', 'COMPLETED', 'CANCELLED'] as const;

function filterForm(current: Partial<Record<FilterName, string>>): HTMLFormElement {
  const status = h(
    'select',
    { name: 'status', testid: 'filter-status' },
    ...STATUSES.map((s) => h('option', { value: s, selected: (current.status ?? 'OPEN') === s }, s.toLowerCase())),
  );
  const form = h(
    'form',
    { class: 'filters', testid: 'task-filters' },
    h('label', {}, 'Status ', status),
    textFilter(current, 'assignee', 'Assignee', 'e.g. ana@example.com'),
    textFilter(current, 'group', 'Candidate group', 'e.g. reviewers'),
    textFilter(current, 'instance', 'Instance', 'a process instance id'),
    h('button', { type: 'submit', testid: 'filter-apply' }, 'Filter'),
    h('span', { class: 'note' }, 'One of assignee, group and instance at a time.'),
  );
  return goOnSubmit(form, FILTERS, link.tasks);
}

function taskRow(t: UserTask): HTMLTableRowElement {
  return row(
    'task-row',
    [
      h('a', { href: link.task(t.id), testid: 'task-link' }, t.name ?? t.activityId),
      h('code', {}, t.activityId),
      h('a', { href: link.instance(t.processInstanceId), testid: 'task-instance' }, t.processInstanceId),
      h('a', { href: link.instances(t.businessKey) }, t.businessKey),
      t.assignee ?? '—',
      t.candidateGroups.length === 0 ? '—' : t.candidateGroups.join(', '),
      t.status,
      time(t.createdAt),
    ],
    { 'data-id': t.id, 'data-instance-id': t.processInstanceId, 'data-activity-id': t.activityId },
  );
}

/** "Open user tasks assigned to ana", "Completed user tasks of instance pi-1". */
function title(filters: Partial<Record<FilterName, string>>): string {
  const status = (filters.status ?? 'OPEN').toLowerCase();
  const of =
    filters.assignee !== undefined
      ? ` assigned to ${filters.assignee}`
      : filters.group !== undefined
        ? ` for group ${filters.group}`
        : filters.instance !== undefined
          ? ` of instance ${filters.instance}`
          : '';
  return `${status.charAt(0).toUpperCase()}${status.slice(1)} user tasks${of}`;
}

export async function renderTasks(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters = filtersOf(params, FILTERS);
  const after = params.get('after');
  const given = ONE_OF.filter((name) => filters[name] !== undefined);
  if (given.length > 1) {
    // Said here, with the form to change it, rather than as the API's 400 in place of the page.
    main.replaceChildren(
      h('h1', {}, 'User tasks'),
      filterForm(filters),
      h(
        'p',
        { class: 'error', testid: 'tasks-filter-invalid' },
        `The list filters by one of assignee, candidate group and instance at a time, not by ${given.join(' and ')}: clear all but one.`,
      ),
    );
    return;
  }
  const page = await api.tasks(filters, after);
  main.replaceChildren(
    h('h1', {}, title(filters)),
    filterForm(filters),
    h('p', { class: 'page-info', testid: 'page-info' }, `${page.tasks.length} on this page, the oldest first`),
    table(
      'tasks',
      ['Task', 'Activity', 'Instance', 'Business key', 'Assignee', 'Candidate groups', 'Status', 'Created'],
      page.tasks.map(taskRow),
      'No user tasks like that.',
    ),
    pager(filters, after, page.next, link.tasks),
  );
}
