/**
 * The completion form of an OPEN user task: variables as JSON, checked in
 * the page before anything is sent, and one request id made when the form
 * is drawn. Every send of the form carries that id, so a double click, or
 * a resend after a lost answer, is the same completion: the server answers
 * ALREADY_COMPLETED and changes nothing. The answer is shown as the API
 * gives it: completed, already completed, or the refusal's reason.
 */
import { api, ApiError, describe } from './api';
import { h } from './dom';
import { link } from './router';
import type { TaskCompletion, UserTask } from './task-types';
import { parseVariables } from './task-variables';

function answerView(done: TaskCompletion): HTMLElement {
  const t = done.task;
  if (done.status === 'ALREADY_COMPLETED')
    return h(
      'p',
      { class: 'note', testid: 'task-already-completed' },
      `Already completed by this request (${done.requestId}): nothing changed now.`,
    );
  return h(
    'p',
    { class: 'summary', testid: 'task-completed' },
    `Completed by ${t.completedBy ?? '(not recorded)'}: the token left ${t.name ?? t.activityId}; `,
    `jobs and timers dispatched: ${done.dispatched}. `,
    h('a', { href: link.instance(t.processInstanceId), testid: 'task-completed-instance' }, 'See the instance'),
  );
}

function failureView(err: unknown): HTMLElement {
  // A refusal (409: completed by another request, cancelled, its token gone) changed nothing and says why.
  return err instanceof ApiError && (err.refused || err.status === 409)
    ? h('p', { class: 'refused', testid: 'task-complete-refused' }, 'Refused, nothing changed: ', err.message)
    : h('p', { class: 'error', testid: 'task-complete-error' }, describe(err));
}

/** The form; `onCompleted` gets the task as the server left it (the view shows its new status). */
export function completionForm(task: UserTask, onCompleted: (task: UserTask) => void): HTMLFormElement {
  // Once per form: whatever is sent from this form is one completion.
  const requestId = crypto.randomUUID();
  const variables = h('textarea', {
    name: 'variables',
    rows: '6',
    spellcheck: 'false',
    placeholder: '{"approved": true}',
    testid: 'task-variables',
  });
  const send = h('button', { type: 'submit', testid: 'task-complete' }, 'Complete');
  const status = h('span', { class: 'status', testid: 'task-complete-status', 'aria-live': 'polite' });
  const result = h('div', { testid: 'task-complete-result' });
  const form = h(
    'form',
    { class: 'complete', testid: 'task-complete-form', 'data-request-id': requestId },
    h('label', {}, 'Variables (JSON object, merged into the instance; empty: none)', variables),
    h(
      'p',
      { class: 'note' },
      'Request ',
      h('code', { testid: 'task-request-id' }, requestId),
      ': sending this form again is the same completion, never a second one.',
    ),
    h('div', { class: 'buttons' }, send, status),
    result,
  );
  let sending = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (sending) return;
    const parsed = parseVariables(variables.value);
    if (!parsed.ok) {
      result.replaceChildren(h('p', { class: 'error', testid: 'task-complete-invalid' }, parsed.reason));
      return;
    }
    sending = true;
    send.disabled = true;
    status.textContent = 'Completing…';
    form.dataset.busy = 'true';
    api
      .completeTask(task.id, parsed.variables, requestId)
      .then(
        (done) => {
          result.replaceChildren(answerView(done));
          onCompleted(done.task);
        },
        (err: unknown) => result.replaceChildren(failureView(err)),
      )
      .finally(() => {
        sending = false;
        // Sendable again: after a lost answer the operator resends, and the request id makes it the same completion.
        send.disabled = false;
        status.textContent = '';
        form.dataset.busy = 'false';
      });
  });
  return form;
}
