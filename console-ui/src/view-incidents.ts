/**
 * What waits for an operator in the process state: the open incidents and
 * the FAILED jobs of instances in INCIDENT (`inbox incidents`), each linked
 * to its instance, where the repairs are. `?all=true` adds resolved
 * incidents and every FAILED job (history).
 */
import type { FailedJobRow, IncidentRow } from '../../functions/src/operations/types';
import { api } from './api';
import { h, row, section, table, time } from './dom';
import { link } from './router';

function incidentRow(i: IncidentRow): HTMLTableRowElement {
  const open = i.resolvedAt === null;
  return row(
    'incident-row',
    [
      h('a', { href: link.instance(i.instanceId), testid: 'incident-instance' }, i.instanceId),
      i.businessKey === null ? '—' : h('a', { href: link.instances(i.businessKey) }, i.businessKey),
      i.reason,
      i.activityId ?? '',
      i.message,
      time(i.at),
      open ? 'open' : h('span', {}, time(i.resolvedAt), i.resolution === null ? '' : ` · ${i.resolution}`),
    ],
    { 'data-instance-id': i.instanceId, 'data-reason': i.reason, class: open ? 'alert' : undefined },
  );
}

function failedJobRow(j: FailedJobRow): HTMLTableRowElement {
  return row(
    'failed-job-row',
    [
      h('a', { href: link.instance(j.processInstanceId) }, j.processInstanceId),
      j.id,
      j.activityId ?? '',
      String(j.attempts),
      j.lastError ?? '',
      time(j.finishedAt),
    ],
    { 'data-job-id': j.id },
  );
}

export async function renderIncidents(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const all = params.get('all') === 'true';
  const list = await api.incidents(all);
  main.replaceChildren(
    h('h1', {}, all ? 'Incidents, resolved ones too' : 'Open incidents'),
    h(
      'p',
      {},
      all
        ? h('a', { href: link.incidents(), testid: 'incidents-open-only' }, 'Open ones only')
        : h('a', { href: link.incidents(true), testid: 'incidents-all' }, 'Resolved ones too'),
    ),
    table(
      'incidents',
      ['Instance', 'Business key', 'Reason', 'Activity', 'Message', 'Raised', 'Resolved'],
      list.incidents.map(incidentRow),
      all ? 'No instance has ever had an incident.' : 'No open incidents.',
    ),
    section(
      all ? 'Failed jobs' : 'Failed jobs of instances in INCIDENT',
      'failed-jobs',
      table(
        'failed-jobs-table',
        ['Instance', 'Job', 'Activity', 'Attempts', 'Last error', 'Failed'],
        list.failedJobs.map(failedJobRow),
        'No failed jobs.',
      ),
    ),
  );
}
