/**
 * The one way the page repairs anything: a dialog that first asks the
 * server for a preview (the real transaction, rolled back) and shows what
 * it would do, and only on "Confirm" sends the same request again, with
 * the same requestId, for real. The requestId makes a repeated confirm
 * (a double click, a retry after a lost answer) apply once; the preview's
 * basis, sent back with it, makes the server refuse the confirmation when
 * what the repair acts on changed since the preview.
 */
import type { RepairBasisView, RepairOutcome, RepairRequest } from '../../functions/src/operations/types';
import { api, ApiError, describe } from './api';
import { button, h } from './dom';

/** A field the operator fills in before the preview (a target, a token, a note). */
export interface DialogField {
  readonly name: string;
  readonly label: string;
  readonly kind: 'select' | 'text' | 'checkbox';
  /** For selects: value and label; a value of '' means "none". */
  readonly options?: ReadonlyArray<{ readonly value: string; readonly label: string }>;
}

export interface RepairDialogSpec {
  readonly title: string;
  readonly fields: readonly DialogField[];
  /** The request from the fields' values; a string is a reason in words why it cannot be built yet. */
  readonly build: (values: ReadonlyMap<string, string | boolean>) => RepairRequest | string;
  /** Called after a confirmed repair when the dialog closes: the view shows the new state. */
  readonly onDone: () => void;
}

function fieldInput(field: DialogField): HTMLInputElement | HTMLSelectElement {
  const testid = `repair-field-${field.name}`;
  if (field.kind === 'select') {
    return h(
      'select',
      { name: field.name, testid },
      ...(field.options ?? []).map((o) => h('option', { value: o.value }, o.label)),
    );
  }
  return h('input', { name: field.name, testid, type: field.kind === 'checkbox' ? 'checkbox' : 'text' });
}

function outcomeView(outcome: RepairOutcome, testid: string): HTMLElement {
  return h(
    'div',
    { testid },
    h('p', { class: 'summary', testid: `${testid}-summary` }, outcome.summary),
    outcome.alreadyApplied
      ? h('p', { testid: `${testid}-already` }, 'This request had already been applied: nothing changed now.')
      : null,
    h('p', {}, `Target: ${outcome.target}`),
    outcome.preview && outcome.basis !== null
      ? h(
          'p',
          { testid: `${testid}-basis` },
          `As read: ${Object.entries(outcome.basis.facts)
            .map(([k, v]) => `${k} ${v === '' ? '(none)' : v}`)
            .join(', ')}. Confirm is refused if this changes first.`,
        )
      : null,
    outcome.writes.length === 0
      ? h('p', { testid: `${testid}-no-writes` }, 'Writes nothing.')
      : h(
          'ul',
          { class: 'writes', testid: `${testid}-writes` },
          ...outcome.writes.map((w) =>
            h(
              'li',
              { testid: 'repair-write' },
              h('code', {}, w.op),
              ' ',
              h('code', {}, w.path),
              w.fields.length > 0 ? ` (${w.fields.join(', ')})` : '',
            ),
          ),
        ),
    outcome.preview
      ? null
      : h(
          'p',
          {},
          `Jobs ${outcome.jobs} (${outcome.dispatched} dispatched), timers ${outcome.timers} (${outcome.timersDispatched} dispatched); by ${outcome.by} at ${outcome.at}.`,
        ),
  );
}

/** Opens the dialog; with no fields the preview starts at once. */
export function openRepairDialog(spec: RepairDialogSpec): HTMLDialogElement {
  const inputs = spec.fields.map((f) => ({ field: f, input: fieldInput(f) }));
  const status = h('div', { class: 'status', testid: 'repair-status', 'aria-live': 'polite' });
  const result = h('div', { testid: 'repair-outcome' });
  let pending: { request: RepairRequest; requestId: string; basis: RepairBasisView | null } | null = null;
  let confirmed = false;

  const dialog = h('dialog', { class: 'repair', testid: 'repair-dialog' });
  const previewButton = button('Preview', 'repair-preview', () => void preview());
  const confirmButton = button('Confirm', 'repair-confirm', () => void confirm(), { disabled: true });
  const closeButton = button('Close', 'repair-close', () => dialog.close());
  const buttons = [previewButton, confirmButton, closeButton];

  const values = (): Map<string, string | boolean> =>
    new Map(
      inputs.map(({ field, input }) => [
        field.name,
        input instanceof HTMLInputElement && input.type === 'checkbox' ? input.checked : input.value,
      ]),
    );

  const busy = (on: boolean, text: string): void => {
    for (const b of buttons) b.disabled = on;
    status.textContent = text;
    dialog.dataset.busy = on ? 'true' : 'false';
  };

  const showFailure = (err: unknown): void => {
    const refused = err instanceof ApiError && (err.refused || err.status === 409);
    result.replaceChildren(
      refused
        ? h('p', { class: 'refused', testid: 'repair-refused' }, 'Refused, nothing changed: ', err.message)
        : h('p', { class: 'error', testid: 'repair-error' }, describe(err)),
    );
  };

  async function preview(): Promise<void> {
    const request = spec.build(values());
    if (typeof request === 'string') {
      result.replaceChildren(h('p', { class: 'error', testid: 'repair-invalid' }, request));
      return;
    }
    // A fresh id per preview: changed fields make a different request, which must not share an id.
    pending = { request, requestId: crypto.randomUUID(), basis: null };
    busy(true, 'Asking for a preview…');
    try {
      const outcome = await api.repair(request, true, pending.requestId);
      // What the preview read: Confirm sends it back, and the server refuses if it changed meanwhile.
      pending.basis = outcome.basis;
      result.replaceChildren(
        h('p', { class: 'note' }, 'Preview: this is what Confirm will do.'),
        outcomeView(outcome, 'repair-preview-outcome'),
      );
      busy(false, '');
      confirmButton.disabled = false;
    } catch (err) {
      pending = null;
      showFailure(err);
      busy(false, '');
      confirmButton.disabled = true;
    }
  }

  async function confirm(): Promise<void> {
    if (pending === null) return;
    busy(true, 'Repairing…');
    try {
      const outcome = await api.repair(pending.request, false, pending.requestId, pending.basis);
      confirmed = true;
      result.replaceChildren(h('p', { class: 'note' }, 'Done.'), outcomeView(outcome, 'repair-result'));
      busy(false, '');
      // Done is done: a second confirm would only find it already applied, and a new preview needs a new dialog.
      confirmButton.disabled = true;
      previewButton.disabled = true;
    } catch (err) {
      showFailure(err);
      busy(false, '');
      confirmButton.disabled = true;
    }
  }

  dialog.append(
    h('h2', { testid: 'repair-title' }, spec.title),
    ...inputs.map(({ field, input }) => h('label', { class: field.kind }, field.label, ' ', input)),
    status,
    result,
    h('div', { class: 'buttons' }, ...buttons),
  );
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (confirmed) spec.onDone();
  });
  document.body.appendChild(dialog);
  dialog.showModal();
  if (spec.fields.length === 0) void preview();
  return dialog;
}
