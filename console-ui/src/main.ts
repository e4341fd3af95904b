/**
 * The console page: asks the server who is looking and, at the same time,
 * for the data of the current hash route's view; draws the frame (nav, the
 * banners of local access and of the viewer role) and the view as they
 * answer. `document.body.dataset.loaded` names the view once it has drawn
 * its data and the frame is up ('error' when it could not), `loadedMs` when
 * (the page's performance.now()): the browser tests time the page by them.
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
import { renderMigrate } from './view-migrate';
import { renderOverview } from './view-overview';
import { renderTask } from './view-task';
import { renderTasks } from './view-tasks';
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
    h('a', { href: link.tasks(), testid: 'nav-tasks' }, 'User tasks'),
    h(
      'span',
      { class: 'who', testid: 'whoami' },
      `${session.id} (${session.role}) · ${session.projectId} · app ${session.app.name}`,
    ),
    // The message filters of every view offer the app's message names (list="app-messages").
    h(
      'datalist',
      { id: 'app-messages', testid: 'app-messages' },
      ...session.app.messages.map((m) => h('option', { value: m })),
    ),
  );
  return h(
    'header',
    {},
    h('div', { class: 'brand' }, 'Inbox console'),
    nav,
    session.access === 'local'
      ? h('p', { class: 'banner local', testid: 'local-banner' }, 'Local console: open on loopback, no sign-in.')
      : null,
    session.role === 'viewer'
      ? h(
          'p',
          { class: 'banner viewer', testid: 'viewer-note' },
          'You may look, not repair (ask to be added to INBOX_CONSOLE_REPAIRERS).',
        )
      : null,
  );
}

function errorBox(message: string): HTMLElement {
  return h(
    'div',
    { class: 'error-box', testid: 'error' },
    h('h2', {}, 'Something went wrong'),
    h('p', { testid: 'error-message' }, message),
  );
}

async function renderRoute(route: Route, main: HTMLElement, ctx: Promise<ViewContext>): Promise<void> {
  switch (route.view) {
    case 'overview':
      return renderOverview(main);
    case 'documents':
      return renderDocuments(main, route.params);
    case 'document':
      return renderDocument(main, route.id, ctx);
    case 'instances':
      return renderInstances(main, route.params, ctx);
    case 'instance':
      return renderInstance(main, route.id, ctx);
    case 'incidents':
      return renderIncidents(main, route.params);
    case 'waiting':
      return renderWaiting(main, route.params);
    case 'tasks':
      return renderTasks(main, route.params);
    case 'task':
      return renderTask(main, route.id, ctx);
    case 'migrate':
      return renderMigrate(main, route.params, ctx);
    case 'not-found':
      throw new Error(`There is no page at ${route.hash}.`);
  }
}

const brand = (): HTMLElement => h('header', {}, h('div', { class: 'brand' }, 'Inbox console'));

function start(): void {
  const root = document.getElementById('app') ?? document.body;
  const main = h('main', { testid: 'main' });
  root.replaceChildren(brand(), main);
  // Who is looking is asked beside the first view's data, not before it: one round trip less before the page shows
  // anything. The frame (nav, banners) is drawn when it answers; a view that shows repair buttons waits for it.
  const session = api.whoami();
  let unknown = false;
  session.then(
    (s) => root.firstElementChild?.replaceWith(frame(s)),
    (err: unknown) => {
      unknown = true;
      root.replaceChildren(brand(), errorBox(`The console does not know who you are: ${describe(err)}`));
      document.body.dataset.loaded = 'error';
    },
  );

  // A newer navigation wins: a slow answer for the page left behind must not draw over the current one.
  let generation = 0;
  const show = (): void => {
    if (unknown) return;
    const mine = ++generation;
    const route = parseRoute(location.hash);
    delete document.body.dataset.loaded;
    delete document.body.dataset.loadedMs;
    document.body.dataset.view = route.view;
    // Each navigation draws into its own box: a stale render fills a detached one, never the page.
    const box = h(
      'div',
      { class: 'view', testid: `view-${route.view}` },
      h('p', { class: 'loading', testid: 'loading' }, 'Loading…'),
    );
    main.replaceChildren(box);
    const ctx: Promise<ViewContext> = session.then((s) => ({ session: s, reload: show }));
    // A view that needs no session never awaits ctx; its rejection (whoami failed) is shown above, not left unhandled.
    ctx.catch(() => undefined);
    // Loaded once the view has drawn its data and the frame is up (the page is whole).
    Promise.all([renderRoute(route, box, ctx), session]).then(
      () => {
        if (mine !== generation || unknown) return;
        // The page's own clock, so a test reads the time to data without a round trip of its own.
        document.body.dataset.loadedMs = String(Math.round(performance.now()));
        document.body.dataset.loaded = route.view;
      },
      (err: unknown) => {
        if (mine !== generation || unknown) return;
        box.replaceChildren(errorBox(describe(err)));
        document.body.dataset.loaded = 'error';
      },
    );
  };
  window.addEventListener('hashchange', show);
  show();
}

start();
