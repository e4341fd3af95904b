/** The overview: the figures of `inbox stats`, what is parked and why, what needs a look. */
import type { Overview } from '../../functions/src/operations/types';
import { api } from './api';
import { age, h, row, section, table, time } from './dom';
import { link } from './router';

function figure(testid: string, label: string, value: string | number, href?: string): HTMLElement {
  const v = h('span', { class: 'value', testid: `${testid}-value` }, String(value));
  return h(
    'div',
    { class: 'figure', testid },
    href === undefined ? v : h('a', { href }, v),
    h('span', { class: 'label' }, label),
  );
}

export function overviewView(o: Overview): HTMLElement {
  const reasons = Object.entries(o.parkedByReason).sort(([a], [b]) => a.localeCompare(b));
  return h(
    'div',
    { testid: 'overview' },
    h('p', { class: 'at' }, 'As of ', time(o.at)),
    h(
      'div',
      { class: 'figures' },
      figure('figure-open', 'open', o.counts.OPEN, link.documents({ status: 'OPEN' })),
      figure('figure-done', 'done', o.counts.DONE, link.documents({ status: 'DONE' })),
      figure('figure-parked', 'parked', o.counts.PARKED, link.documents({ status: 'PARKED' })),
      figure('figure-oldest-open', 'oldest open', age(o.oldestOpenAgeSeconds)),
      // The gauge counts instances (`inbox stats`: "instances in INCIDENT"); the list shows each of their open incidents.
      figure('figure-incidents', 'instances in INCIDENT', o.openIncidents, link.incidents()),
      // Every FAILED job, history included (the gauge has no alert for that reason): the list with resolved ones shows them all.
      figure('figure-failed-jobs', 'failed jobs', o.failedJobs, link.incidents(true)),
    ),
    section(
      'Parked, by reason',
      'parked-by-reason',
      table(
        'parked-reasons',
        ['Reason', 'Documents'],
        reasons.map(([reason, n]) =>
          row(
            'parked-reason-row',
            [
              h('a', { href: link.documents({ status: 'PARKED', reason }), testid: `parked-reason-${reason}` }, reason),
              String(n),
            ],
            { 'data-reason': reason },
          ),
        ),
        'No park reasons.',
      ),
    ),
    section(
      `Waiting longer than ${o.waitingAlertDays} days`,
      'waiting-too-long',
      table(
        'waiting',
        ['Message', 'Waiting too long', 'Oldest waiting'],
        o.waiting.map((w) =>
          row(
            'waiting-row',
            // Open user tasks: the task list shows them, the oldest first (it has no age filter, so the count is no link).
            w.kind === 'userTasks'
              ? [
                  h('a', { href: link.tasks(), testid: 'waiting-user-tasks' }, 'open user tasks'),
                  String(w.waitingOverThreshold),
                  age(w.oldestWaitingAgeSeconds),
                ]
              : [
                  h('a', { href: link.waiting({ message: w.messageName }) }, w.messageName),
                  // The alert's own threshold as the list's age filter: the list shows exactly the tokens this figure counts.
                  h(
                    'a',
                    {
                      href: link.waiting({ message: w.messageName, olderThan: `${o.waitingAlertDays}d` }),
                      testid: `waiting-too-long-${w.messageName}`,
                    },
                    String(w.waitingOverThreshold),
                  ),
                  age(w.oldestWaitingAgeSeconds),
                ],
            { 'data-message-name': w.messageName, class: w.waitingOverThreshold > 0 ? 'alert' : undefined },
          ),
        ),
        'Nothing waits for a message.',
      ),
    ),
    section(
      'Look further',
      'links',
      h(
        'ul',
        {},
        h(
          'li',
          {},
          h('a', { href: link.documents({ status: 'PARKED' }), testid: 'link-parked' }, 'All parked documents'),
        ),
        h(
          'li',
          {},
          h('a', { href: link.documents({ status: 'OPEN' }), testid: 'link-open' }, 'Open documents, oldest first'),
        ),
        h('li', {}, h('a', { href: link.incidents(), testid: 'link-incidents' }, 'Open incidents and failed jobs')),
        h(
          'li',
          {},
          h('a', { href: link.waiting(), testid: 'link-waiting' }, 'Tokens waiting for a message, the longest first'),
        ),
        h('li', {}, h('a', { href: link.tasks(), testid: 'link-tasks' }, 'Open user tasks, the oldest first')),
        h('li', {}, h('a', { href: link.instances(), testid: 'link-instances' }, 'Instances by business key')),
      ),
    ),
  );
}

export async function renderOverview(main: HTMLElement): Promise<void> {
  main.replaceChildren(overviewView(await api.overview()));
}
