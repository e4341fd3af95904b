/**
 * The filters of a list view, kept in its address (so a filtered page can be
 * pasted): read from the route's parameters, and a form that, submitted,
 * moves to the address of its filled-in fields.
 */
import { h } from './dom';

/** The set filters among `names`, from a route's parameters (empty values are unset). */
export function filtersOf<N extends string>(params: URLSearchParams, names: readonly N[]): Partial<Record<N, string>> {
  const out: Partial<Record<N, string>> = {};
  for (const name of names) {
    const v = params.get(name);
    if (v !== null && v !== '') out[name] = v;
  }
  return out;
}

/** On submit, goes to `linkOf` of the form's fields among `names`, trimmed, the empty ones left out. */
export function goOnSubmit<N extends string>(
  form: HTMLFormElement,
  names: readonly N[],
  linkOf: (params: Readonly<Record<string, string>>) => string,
): HTMLFormElement {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const params: Record<string, string> = {};
    for (const name of names) {
      const v = data.get(name);
      if (typeof v === 'string' && v.trim() !== '') params[name] = v.trim();
    }
    location.hash = linkOf(params);
  });
  return form;
}

/** A labelled text field of a filter form, holding the filter's current value. */
export function textFilter<N extends string>(
  current: Partial<Record<N, string>>,
  name: N,
  label: string,
  placeholder: string,
  list?: string,
): HTMLElement {
  return h(
    'label',
    {},
    label,
    ' ',
    h('input', {
      name,
      value: current[name] ?? '',
      placeholder,
      testid: `filter-${name}`,
      ...(list === undefined ? {} : { list }),
    }),
  );
}

/** "first page" (when not on it) and "next page" (the server's cursor) or "last page", the filters kept. */
export function pager(
  filters: Readonly<Record<string, string | undefined>>,
  after: string | null,
  next: string | null,
  linkOf: (params: Readonly<Record<string, string | undefined>>) => string,
): HTMLElement {
  return h(
    'nav',
    { class: 'pager' },
    after === null ? null : h('a', { href: linkOf(filters), testid: 'first-page' }, 'first page'),
    next === null
      ? h('span', { testid: 'last-page' }, 'last page')
      : h('a', { href: linkOf({ ...filters, after: next }), testid: 'next-page' }, 'next page'),
  );
}
