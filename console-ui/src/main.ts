/**
 * The console page: asks the server who is looking, draws the frame (nav,
 * the banners of local access and of the viewer role), then the view of the
 * current hash route. `document.body.dataset.loaded` names the view once it
 * has drawn its data ('error' when it could not), `loadedMs` when (the
 * page's performance.now()): the browser tests time the page by them.
 */
import { api, describe, type Whoami } from './api';
import type { ViewContext } from './context';
import { h } from './dom';
import { link, parseRoute, type Route } from './router';
import { renderDocument } from './view-document';
import { renderDocuments } from './view-documents';
import { renderIncidents } from './view-incidents';
import { renderInstance } from './view-instance';
import { renderInstances } from './view-instances';
import { renderOverview } from './view-overview';
import { renderWaiting } from './view-waiting';

function frame(session: Whoami): HTMLElement {
  const nav = h(
    'nav',
    { class: 'top' },
    h('a', { href: link.overview(), testid: 'nav-overview' }, 'Overview'),
    h('a', { href: link.documents({ status: 'PARKED' }), testid: 'nav-documents' }, 'Documents'),
    h('a', { href: link.instances(), testid: 'nav-instances' }, 'Instances'),
    h('a', { href: link.incidents(), testid: 'nav-incidents' }, 'Incidents'),
    h('a', { href: link.waiting(), testid: 'nav-waiting' }, 'Waiting'),
    h('span', { class: 'who', testid: 'whoami' }, `${session.id} (${session.role}) · ${session.projectId}`),
  );
  return h(
    'header',
    {},
    h('div', { class: 'brand' }, 'Inbox console'),
    nav,
    session.access === 'local' ? h('p', { class: 'banner local', testid: 'local-banner' }, 'Local console: open on loopback, no sign-in.') : null,
    session.role === 'viewer' ? h('p', { class: 'banner viewer', testid: 'viewer-note' }, 'You may look, not repair (ask to be added to INBOX_CONSOLE_REPAIRERS).') : null,
  );
}

function errorBox(message: string): HTMLElement {
  return h('div', { class: 'error-box', testid: 'error' }, h('h2', {}, 'Something went wrong'), h('p', { testid: 'error-message' }, message));
}

async function renderRoute(route: Route, main: HTMLElement, ctx: ViewContext): Promise<void> {
  switch (route.view) {
    case 'overview':
      return renderOverview(main);
    case 'documents':
      return renderDocuments(main, route.params);
    case 'document':
      return renderDocument(main, route.id, ctx);
    case 'instances':
      return renderInstances(main, route.params);
    case 'instance':
      return renderInstance(main, route.id, ctx);
    case 'incidents':
      return renderIncidents(main, route.params);
    case 'waiting':
      return renderWaiting(main, route.params);
    case 'not-found':
      throw new Error(`There is no page at ${route.hash}.`);
  }
}

async function start(): Promise<void> {
  const root = document.getElementById('app') ?? document.body;
  const main = h('main', { testid: 'main' });
  let session: Whoami;
  try {
    session = await api.whoami();
  } catch (err) {
    root.replaceChildren(h('header', {}, h('div', { class: 'brand' }, 'Inbox console')), errorBox(`The console does not know who you are: ${describe(err)}`));
    document.body.dataset.loaded = 'error';
    return;
  }
  root.replaceChildren(frame(session), main);

  // A newer navigation wins: a slow answer for the page left behind must not draw over the current one.
  let generation = 0;
  const show = (): void => {
    const mine = ++generation;
    const route = parseRoute(location.hash);
    delete document.body.dataset.loaded;
    delete document.body.dataset.loadedMs;
    document.body.dataset.view = route.view;
    // Each navigation draws into its own box: a stale render fills a detached one, never the page.
    const box = h('div', { class: 'view', testid: `view-${route.view}` }, h('p', { class: 'loading', testid: 'loading' }, 'Loading…'));
    main.replaceChildren(box);
    const ctx: ViewContext = { session, reload: show };
    renderRoute(route, box, ctx).then(
      () => {
        if (mine !== generation) return;
        // The page's own clock, so a test reads the time to data without a round trip of its own.
        document.body.dataset.loadedMs = String(Math.round(performance.now()));
        document.body.dataset.loaded = route.view;
      },
      (err: unknown) => {
        if (mine !== generation) return;
        box.replaceChildren(errorBox(describe(err)));
        document.body.dataset.loaded = 'error';
      },
    );
  };
  window.addEventListener('hashchange', show);
  show();
}

void start();
