/** One inbox document: where it is and why (`inbox explain`), its payload, errors, history and repairs. */
import type { DocumentView } from '../../functions/src/operations/types';
import { api, rawUrl } from './api';
import { mayRepair, type ViewContext } from './context';
import { button, h, json, section } from './dom';
import { openRepairDialog } from './repair-dialog';
import { repairsSection } from './repairs-table';
import { link } from './router';

function explanation(d: DocumentView): HTMLElement {
  const e = d.explanation;
  return section(
    'What is going on',
    'explanation',
    h('p', { class: 'summary', testid: 'explanation-summary' }, e.summary),
    e.because.length === 0
      ? null
      : h(
          'div',
          {},
          h('h3', {}, 'Because'),
          h('ul', { testid: 'explanation-because' }, ...e.because.map((b) => h('li', {}, b))),
        ),
    e.next.length === 0
      ? null
      : h(
          'div',
          {},
          h('h3', {}, 'Next'),
          h('ul', { testid: 'explanation-next' }, ...e.next.map((n) => h('li', {}, n))),
        ),
  );
}

/** How the raw bytes came, in words. */
const FORMS: Readonly<Record<string, string>> = {
  DECODED: "the message's data, decoded from base64",
  UNDECODABLE_BASE64: "the characters of the message's data field: they were not base64",
};

/**
 * What the receiver kept of the message as it came (an unreadable one's
 * only copy): its first bytes as text, set with textContent (a `<script>`
 * in them is text), and a download of every byte.
 */
function rawData(d: DocumentView): HTMLElement | null {
  const r = d.raw;
  if (r === null) return null;
  const count = (n: number): string => `${n.toLocaleString('en')} byte${n === 1 ? '' : 's'}`;
  const form = r.form === null ? '' : ` (${FORMS[r.form] ?? r.form})`;
  const shown = r.shownBytes < r.bytes ? `; the first ${count(r.shownBytes)} shown as text` : '';
  return h(
    'div',
    { class: 'raw', testid: 'payload-raw' },
    h('h3', {}, 'As received'),
    h('p', { testid: 'payload-raw-size' }, `${count(r.bytes)}${form}${shown}.`),
    r.utf8
      ? null
      : h(
          'p',
          { class: 'note', testid: 'payload-raw-not-utf8' },
          'Not valid UTF-8: each byte that is not is shown as \uFFFD (U+FFFD); the download has the exact bytes.',
        ),
    h('pre', { class: 'raw-text', testid: 'payload-raw-text' }, r.text),
    h(
      'p',
      {},
      h('a', { href: rawUrl(d.id), download: true, testid: 'payload-raw-download' }, `Download all ${count(r.bytes)}`),
    ),
  );
}

function payload(d: DocumentView): HTMLElement {
  const p = d.payload;
  const where = (label: string, ref: { uri: string; state: string }, testid: string): HTMLElement =>
    h('p', { testid }, `${label}: `, h('code', {}, ref.uri), ` (${ref.state})`);
  return section(
    'Payload',
    'payload',
    p.offloaded === null ? null : where('Offloaded to', p.offloaded, 'payload-offloaded'),
    p.reference === null ? null : where('Referenced', p.reference, 'payload-reference'),
    p.inline === null && p.offloaded === null && p.reference === null && d.raw === null
      ? h('p', { class: 'empty' }, 'No payload.')
      : null,
    p.inline === null ? null : json(p.inline, 'payload-inline'),
    rawData(d),
  );
}

function repairButtons(d: DocumentView, ctx: ViewContext): HTMLElement | null {
  if (!mayRepair(ctx)) return null;
  const onDone = ctx.reload;
  return h(
    'div',
    { class: 'actions', testid: 'document-actions' },
    button('Requeue', 'repair-requeue', () =>
      openRepairDialog({ title: `Requeue ${d.id}`, fields: [], build: () => ({ kind: 'requeue', id: d.id }), onDone }),
    ),
    button('Park', 'repair-park', () =>
      openRepairDialog({
        title: `Park ${d.id}`,
        fields: [{ name: 'text', label: 'Why (recorded on the document)', kind: 'text' }],
        build: (v) => {
          const text = v.get('text');
          return typeof text === 'string' && text.trim() !== ''
            ? { kind: 'park', id: d.id, text: text.trim() }
            : 'Say why it is parked.';
        },
        onDone,
      }),
    ),
  );
}

export function documentView(d: DocumentView, ctx: ViewContext): HTMLElement {
  const r = d.row;
  const errors = [
    r.error,
    typeof d.stored.validationError === 'string' && d.stored.validationError !== r.error
      ? d.stored.validationError
      : null,
  ].filter((e): e is string => e !== null);
  return h(
    'div',
    { testid: 'document' },
    h('h1', {}, 'Document ', h('code', { testid: 'document-id' }, d.id)),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Status'),
      h('dd', { testid: 'document-status' }, r.status, r.reason === null ? '' : ` (${r.reason})`),
      h('dt', {}, 'Message'),
      h('dd', {}, r.messageName ?? '—'),
      h('dt', {}, 'Key'),
      h(
        'dd',
        {},
        r.correlationKey === null ? '—' : h('a', { href: link.instances(r.correlationKey) }, r.correlationKey),
      ),
      h('dt', {}, 'Attempts'),
      h('dd', { testid: 'document-attempts' }, String(r.attempts)),
      h('dt', {}, 'Instance'),
      h(
        'dd',
        {},
        d.processInstanceId === null
          ? '—'
          : h('a', { href: link.instance(d.processInstanceId), testid: 'document-instance' }, d.processInstanceId),
      ),
    ),
    repairButtons(d, ctx),
    explanation(d),
    section(
      'Errors',
      'errors',
      errors.length === 0
        ? h('p', { class: 'empty' }, 'No errors.')
        : h('ul', {}, ...errors.map((e) => h('li', { testid: 'document-error' }, e))),
    ),
    payload(d),
    section(
      'Dead-letter history',
      'dead-letter',
      d.deadLetter === null
        ? h('p', { class: 'empty' }, 'Never dead-lettered.')
        : json(d.deadLetter, 'dead-letter-json'),
    ),
    repairsSection(d.repairs),
    h('details', {}, h('summary', {}, 'Stored document'), json(d.stored, 'document-stored')),
  );
}

/** Draws the document once both it and who is looking are known (both asked at once). */
export async function renderDocument(main: HTMLElement, id: string, context: Promise<ViewContext>): Promise<void> {
  const [d, ctx] = await Promise.all([api.document(id), context]);
  main.replaceChildren(documentView(d, ctx));
}
