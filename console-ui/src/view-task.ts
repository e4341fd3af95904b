/**
 * One user task (`inbox tasks show`): what it is, where its token waits,
 * who may do it, what became of it; for a repairer, while it is OPEN, the
 * completion form (task-complete-form.ts).
 */
import { api } from './api';
import { mayRepair, type ViewContext } from './context';
import { h, section, time, type Child } from './dom';
import { link } from './router';
import { completionForm } from './task-complete-form';
import type { UserTask } from './task-types';

function facts(t: UserTask): HTMLElement {
  const fact = (label: string, testid: string, ...value: readonly Child[]): HTMLElement[] => [
    h('dt', {}, label),
    h('dd', { testid }, ...value),
  ];
  return h(
    'dl',
    { class: 'facts', testid: 'task-facts', 'data-status': t.status },
    ...fact('Name', 'task-name', t.name ?? '(unnamed)'),
    ...fact('Activity', 'task-activity', h('code', {}, t.activityId)),
    ...fact(
      'Instance',
      'task-instance',
      h('a', { href: link.instance(t.processInstanceId), testid: 'task-instance-link' }, t.processInstanceId),
      ` (${t.processKey}, business key `,
      h('a', { href: link.instances(t.businessKey) }, t.businessKey),
      ', token ',
      h('code', {}, t.executionId),
      ')',
    ),
    ...fact('Assignee', 'task-assignee', t.assignee ?? '—'),
    ...fact('Candidate groups', 'task-groups', t.candidateGroups.length === 0 ? '—' : t.candidateGroups.join(', ')),
    ...(t.candidateUsers === undefined ? [] : fact('Candidate users', 'task-users', t.candidateUsers.join(', '))),
    // The form key names a form of the team's own task list: shown as text, never fetched or opened.
    ...fact('Form key', 'task-form-key', t.formKey === null ? '—' : h('code', {}, t.formKey)),
    ...fact('Status', 'task-status', t.status),
    ...fact('Created', 'task-created', time(t.createdAt)),
    ...fact('Closed', 'task-closed', time(t.closedAt)),
    ...fact('Completed by', 'task-completed-by', t.completedBy ?? '—'),
    ...fact('Cancel reason', 'task-cancel-reason', t.cancelReason ?? '—'),
  );
}

function completion(t: UserTask, ctx: ViewContext, shown: HTMLElement): HTMLElement {
  const body =
    t.status !== 'OPEN'
      ? h(
          'p',
          { class: 'empty', testid: 'task-closed-note' },
          `This task is ${t.status}: there is nothing to complete.`,
        )
      : mayRepair(ctx)
        ? completionForm(t, (after) => shown.replaceChildren(facts(after)))
        : h(
            'p',
            { class: 'note', testid: 'task-complete-viewer' },
            'Completing a task needs the repairer role (ask to be added to INBOX_CONSOLE_REPAIRERS).',
          );
  return section('Complete', 'task-complete-section', body);
}

/** Draws the task once both it and who is looking are known (both asked at once). */
export async function renderTask(main: HTMLElement, id: string, context: Promise<ViewContext>): Promise<void> {
  const [t, ctx] = await Promise.all([api.task(id), context]);
  const shown = h('div', {}, facts(t));
  main.replaceChildren(
    h('h1', {}, 'User task ', h('code', { testid: 'task-id' }, t.id)),
    shown,
    h(
      'p',
      {},
      h(
        'a',
        { href: link.tasks({ instance: t.processInstanceId }), testid: 'task-instance-tasks' },
        'The open tasks of this instance',
      ),
    ),
    completion(t, ctx, shown),
  );
}
