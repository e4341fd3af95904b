/**
 * The read-only tables of the instance view (view-instance.ts, which keeps
 * the ones with repair buttons): timers, jobs, the audit trail of the
 * messages it correlated, the parked documents of its keys, the repairs
 * done to it and its variables.
 */
import type { InstanceView } from '../../functions/src/operations/types';
import { h, json, row, section, table, time } from './dom';
import { repairsSection } from './repairs-table';
import { link } from './router';
import { DOCUMENT_HEADERS, documentRow } from './view-documents';

function auditSection(v: InstanceView): HTMLElement {
  const now = Date.now();
  return section(
    `Audit trail (${v.audit.length} correlated messages, oldest first)`,
    'audit',
    table(
      'audit-table',
      ['Document', 'Status', 'Message', 'Key', 'Received'],
      v.audit.map((a) =>
        a.row === null
          ? row(
              'audit-row',
              [h('a', { href: link.document(a.inboxId) }, a.inboxId), h('em', {}, 'gone (purged)'), '', '', ''],
              { 'data-id': a.inboxId },
            )
          : row(
              'audit-row',
              [
                h('a', { href: link.document(a.inboxId) }, a.inboxId),
                a.row.status,
                a.row.messageName ?? '',
                a.row.correlationKey ?? '',
                time(a.row.receivedAt),
              ],
              {
                'data-id': a.inboxId,
                title:
                  a.row.receivedAt === null
                    ? undefined
                    : `${Math.round((now - Date.parse(a.row.receivedAt)) / 1000)} s ago`,
              },
            ),
      ),
      'No message correlated yet.',
    ),
  );
}

/** What each element of the model runs, as the engine read it: handler types, keys, FEEL and mappings as written. */
function modelSection(v: InstanceView): HTMLElement[] {
  if (v.model === null) return [];
  return [
    section(
      'How the model runs',
      'model-notes',
      table(
        'model-notes-table',
        ['Element', 'Kind', 'Runs'],
        v.model.notes.map((n) =>
          row(
            'model-note-row',
            [
              h('code', {}, n.id),
              n.kind,
              h('span', {}, ...n.notes.flatMap((text, i) => (i === 0 ? [text] : [h('br'), text]))),
            ],
            { 'data-id': n.id },
          ),
        ),
        'No element with a handler, key, condition or mapping.',
      ),
    ),
  ];
}

/** The sections below the tokens and incidents. */
export function otherSections(v: InstanceView): HTMLElement[] {
  const now = Date.now();
  return [
    ...modelSection(v),
    section(
      'Timers',
      'timers',
      table(
        'timer-table',
        ['Timer', 'At', 'Status', 'Due'],
        v.timers.map((t) =>
          row('timer-row', [h('code', {}, t.id), t.activityId, t.status, time(t.dueAt)], { 'data-id': t.id }),
        ),
        'No timers.',
      ),
    ),
    section(
      'Jobs',
      'jobs',
      table(
        'job-table',
        ['Job', 'At', 'Status', 'Attempts', 'Last error'],
        v.jobs.map((j) =>
          row('job-row', [h('code', {}, j.id), j.activityId, j.status, String(j.attempts), j.lastError ?? ''], {
            'data-id': j.id,
            class: j.status === 'FAILED' ? 'alert' : undefined,
          }),
        ),
        'No jobs.',
      ),
    ),
    auditSection(v),
    section(
      'Parked documents of its keys',
      'parked',
      table(
        'parked-table',
        DOCUMENT_HEADERS,
        v.parked.map((d) => documentRow(d, now)),
        'Nothing parked for its keys.',
      ),
    ),
    repairsSection(v.repairs),
    h('details', {}, h('summary', {}, 'Variables'), json(v.variables, 'instance-variables')),
  ];
}
