/**
 * A tiny element builder: the views build their DOM with it instead of
 * innerHTML, so every text from the API (messages, ids, payloads) is text,
 * never markup.
 */

/** What may go inside an element: nodes, text, and nothing (null/false/undefined are skipped). */
export type Child = Node | string | number | null | false | undefined;

/** Attributes by name; `testid` becomes `data-testid`; undefined or false leaves the attribute out. */
export type Attrs = Readonly<Record<string, string | boolean | undefined>>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: readonly Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name === 'testid' ? 'data-testid' : name, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
}

/** A button with its click handler. */
export function button(label: string, testid: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', testid, ...attrs }, label);
  b.addEventListener('click', onClick);
  return b;
}

/** A section with a heading. */
export function section(title: string, testid: string, ...children: readonly Child[]): HTMLElement {
  return h('section', { testid }, h('h2', {}, title), ...children);
}

/** A table: header cells, then one row per item (rows built by the caller, so each can carry its test id). */
export function table(
  testid: string,
  headers: readonly string[],
  rows: readonly HTMLTableRowElement[],
  empty: string,
): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', testid: `${testid}-empty` }, empty);
  const body = h('tbody');
  // One fragment: a page of rows costs one layout, not one per row.
  const fragment = document.createDocumentFragment();
  append(fragment, rows);
  body.appendChild(fragment);
  return h('table', { testid }, h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', {}, t)))), body);
}

export function row(testid: string, cells: readonly Child[], attrs: Attrs = {}): HTMLTableRowElement {
  return h('tr', { testid, ...attrs }, ...cells.map((c) => h('td', {}, c)));
}

/** JSON for a person: indented, in a <pre>. */
export function json(value: unknown, testid: string): HTMLElement {
  return h('pre', { class: 'json', testid }, JSON.stringify(value, null, 2));
}

/** An ISO time as the browser's local time, with the ISO text as its title; "—" for null. */
export function time(iso: string | null): Child {
  if (iso === null) return '—';
  const d = new Date(iso);
  return h('time', { datetime: iso, title: iso }, Number.isNaN(d.getTime()) ? iso : d.toLocaleString());
}

/** Seconds as "3 d 4 h", "5 min", "12 s". */
export function age(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds >= 86_400) return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3_600)} h`;
  if (seconds >= 3_600) return `${Math.floor(seconds / 3_600)} h ${Math.floor((seconds % 3_600) / 60)} min`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)} min`;
  return `${Math.round(seconds)} s`;
}
