/** Instances by business key: a search box and the instances it finds. */
import type { InstanceRow } from '../../functions/src/operations/types';
import { api } from './api';
import { h, row, table, time } from './dom';
import { link } from './router';

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

function instanceRow(i: InstanceRow): HTMLTableRowElement {
  return row(
    'instance-row',
    [
      h('a', { href: link.instance(i.id) }, i.id),
      i.processKey,
      i.status,
      time(i.createdAt),
      String(i.activeTokens),
      String(i.openIncidents),
    ],
    { 'data-id': i.id, class: i.openIncidents > 0 ? 'alert' : undefined },
  );
}

export async function renderInstances(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const key = params.get('businessKey')?.trim() ?? '';
  if (key === '') {
    main.replaceChildren(
      h('h1', {}, 'Instances'),
      searchBox(''),
      h(
        'p',
        { class: 'empty', testid: 'instances-hint' },
        'Enter a business key (the correlation key of its messages).',
      ),
    );
    return;
  }
  const { instances } = await api.instances(key);
  main.replaceChildren(
    h('h1', {}, 'Instances of ', h('code', {}, key)),
    searchBox(key),
    table(
      'instances',
      ['Id', 'Process', 'Status', 'Created', 'Active tokens', 'Open incidents'],
      instances.map(instanceRow),
      `No instance has the business key ${key}.`,
    ),
  );
}
