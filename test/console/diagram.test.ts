/**
 * The console page in a real browser (Debian's chromium via playwright-core),
 * served from dist/console-page with the fixture API of test/support/console-fixtures.ts:
 * the diagram of the fixture app's model with the instance's overlays, the
 * repair dialog's preview-then-confirm protocol, refusals, errors in words,
 * and the viewer role without repair buttons. Needs `npm run build`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { InstanceView, RepairRequest } from '../../functions/src/operations/types';
import { type Browser, launchBrowser, openView, waitLoaded } from '../support/browser';
import { waitFor } from '../support/wait';
import {
  BUSINESS_KEY,
  FIXTURE_BASIS,
  instanceView,
  OVERVIEW,
  outcomeOf,
  REFUSAL,
  REFUSED_TOKEN,
  TOKEN_A,
  WHOAMI,
  fixtureModel,
} from '../support/console-fixtures';
import { type Answer, type PageServer, type Routes, servePage } from '../support/console-page-server';

const SHOTS = join(__dirname, '..', '..', 'test-output', 'console');

/** Repair answers the server holds until the test, having looked at the waiting dialog, lets one go. */
interface Gate {
  held: number;
  readonly waiting: Array<() => void>;
}

/** Waits until the server holds a repair request, then answers it. */
async function releaseNext(gate: Gate): Promise<void> {
  await waitFor('a repair request held by the server', async () => (gate.waiting.length > 0 ? true : undefined));
  gate.waiting.shift()?.();
}

/** The fixture instance as a called one, its token waiting at a call activity whose instance has an open incident. */
async function callingView(): Promise<InstanceView> {
  const v = await instanceView();
  const incident = { ...(v.incidents[0] as InstanceView['incidents'][number]), activityId: 'pack' };
  return {
    ...v,
    row: { ...v.row, id: 'pi-call' },
    calledBy: { instanceId: 'pi-parent', activityId: 'fulfil' },
    tokens: [
      { id: 't-call', activityId: 'settle', status: 'WAITING_CALL', waitingFor: null, calledInstanceId: 'pi-child' },
    ],
    calls: [
      {
        executionId: 't-call',
        activityId: 'settle',
        instanceId: 'pi-child',
        processKey: 'shipment',
        status: 'INCIDENT',
        openIncidents: [incident],
      },
    ],
  };
}

function routes(who: (typeof WHOAMI)[keyof typeof WHOAMI], gate: Gate | null): Routes {
  return {
    'GET /api/whoami': () => ({ status: 200, body: who }),
    'GET /api/overview': () => ({ status: 200, body: OVERVIEW }),
    'GET /api/instances/:id': async ({ path }) =>
      path.endsWith(`/${encodeURIComponent('pi-c-4711')}`)
        ? { status: 200, body: await instanceView() }
        : path.endsWith('/pi-call')
          ? { status: 200, body: await callingView() }
          : { status: 404, body: { error: 'no such instance' } },
    'GET /api/documents/:id': ({ path }) => ({
      status: 404,
      body: { error: `no inbox document ${decodeURIComponent(path.split('/').pop() ?? '')}` },
    }),
    'GET /api/documents': ({ query }) => ({
      status: 200,
      body: {
        documents: [
          {
            id: query.get('after') ?? 'doc-0001',
            status: 'PARKED',
            reason: query.get('reason'),
            messageName: null,
            correlationKey: BUSINESS_KEY,
            attempts: 3,
            receivedAt: null,
            error: 'x',
          },
        ],
        next: 'doc-0050',
      },
    }),
    'POST /api/repairs': async ({ body }) => {
      const { request, preview } = body as { request: RepairRequest; preview: boolean };
      if (gate !== null) {
        gate.held += 1;
        await new Promise<void>((go) => gate.waiting.push(go));
      }
      const answer: Answer =
        request.kind === 'cancel-token' && request.executionId === REFUSED_TOKEN
          ? { status: 409, body: { error: REFUSAL, refused: true } }
          : { status: 200, body: outcomeOf(request, preview) };
      return answer;
    },
  };
}

const testid = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

describe('console page: the instance view in chromium', () => {
  let browser: Browser;
  let server: PageServer;
  const gate: Gate = { held: 0, waiting: [] };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await servePage(routes(WHOAMI.localRepairer, gate));
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  it('draws every task and event of the model, a "2" badge where two tokens wait, the incident in red', async () => {
    const page = await browser.newPage();
    const ms = await openView(page, `${server.url}#/instances/pi-c-4711`, 'instance');
    const { model } = await fixtureModel();
    const drawn = await page
      .locator('svg [data-element-id]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-element-id')));
    for (const id of Object.keys(model.nodes)) expect({ id, drawn: drawn.includes(id) }).toEqual({ id, drawn: true });

    await expect(testid(page, 'badge-tokens-waitForCompletion').textContent()).resolves.toBe('2');
    await expect(testid(page, 'badge-timers-completionOverdue').textContent()).resolves.toBe('◔2');
    const incident = page.locator('svg g.djs-element[data-element-id="waitForCompletion"]');
    expect(await incident.getAttribute('class')).toContain('has-incident');
    expect(await page.locator('svg g.djs-element[data-element-id="settle"]').getAttribute('class')).not.toContain(
      'has-incident',
    );
    // Painted red by app.css, not only marked: the stylesheet reached the browser.
    const stroke = await incident
      .locator('.djs-visual > :first-child')
      .evaluate((e) => e.ownerDocument.defaultView?.getComputedStyle(e).stroke);
    expect(stroke).toBe('rgb(198, 40, 40)');

    await expect(testid(page, 'local-banner').textContent()).resolves.toContain(
      'Local console: open on loopback, no sign-in',
    );
    expect(await page.locator('[data-testid="audit-row"]').count()).toBe(2);
    expect(await page.locator('[data-testid="audit-row"] a').first().getAttribute('href')).toBe(
      '#/documents/msg-released-1',
    );
    expect(await page.locator('[data-testid="repair-record"]').first().textContent()).toContain('ops@example.com');
    await page.screenshot({ path: join(SHOTS, 'instance.png'), fullPage: true });
    console.log(`console page: instance view loaded in ${Math.round(ms)} ms`);
    await page.close();
  });

  it('a called instance links its caller; a token at a call activity links the instance it called, with its incident', async () => {
    const page = await browser.newPage();
    await openView(page, `${server.url}#/instances/pi-call`, 'instance');
    await expect(testid(page, 'called-by').getAttribute('href')).resolves.toBe('#/instances/pi-parent');
    await expect(testid(page, 'instance-facts').textContent()).resolves.toContain('called by pi-parent at fulfil');
    const call = testid(page, 'token-call-t-call');
    await expect(call.textContent()).resolves.toBe('called instance shipment (INCIDENT, 1 open incident)');
    await expect(call.getAttribute('href')).resolves.toBe('#/instances/pi-child');
    await page.close();
  });

  it('moves a token: the preview shows the summary first, Confirm sends the same requestId, buttons wait meanwhile', async () => {
    const page = await browser.newPage();
    await openView(page, `${server.url}#/instances/pi-c-4711`, 'instance');
    const before = server.requests.length;
    await testid(page, 'repair-move-token').click();
    await testid(page, 'repair-field-activityId').selectOption('settle');
    await testid(page, 'repair-field-executionId').selectOption(TOKEN_A);
    gate.held = 0;
    await testid(page, 'repair-preview').click();
    // The server holds the preview: the dialog waits with its buttons disabled.
    await page.locator('[data-testid="repair-dialog"][data-busy="true"]').waitFor();
    expect(await testid(page, 'repair-preview').isDisabled()).toBe(true);
    expect(await testid(page, 'repair-confirm').isDisabled()).toBe(true);
    await releaseNext(gate);
    await expect(testid(page, 'repair-preview-outcome-summary').textContent()).resolves.toBe(
      `moves token ${TOKEN_A} to settle`,
    );
    expect(await testid(page, 'repair-write').first().textContent()).toContain('processInstances/pi-c-4711');
    const posts = () => server.requests.slice(before).filter((r) => r.method === 'POST');
    expect(posts()).toHaveLength(1);

    await testid(page, 'repair-confirm').click();
    await page.locator('[data-testid="repair-dialog"][data-busy="true"]').waitFor();
    expect(await testid(page, 'repair-confirm').isDisabled()).toBe(true);
    await releaseNext(gate);
    await expect(testid(page, 'repair-result-summary').textContent()).resolves.toBe(`moves token ${TOKEN_A} to settle`);
    const [preview, real] = posts() as [(typeof server.requests)[number], (typeof server.requests)[number]];
    expect(posts()).toHaveLength(2);
    const want: RepairRequest = {
      kind: 'move-token',
      instanceId: 'pi-c-4711',
      activityId: 'settle',
      executionId: TOKEN_A,
      force: false,
    };
    expect(preview.body).toEqual({ request: want, preview: true, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    // The confirmation sends back what the preview read (its basis): the server refuses it if that changed since.
    expect(real.body).toEqual({
      request: want,
      preview: false,
      requestId: (preview.body as { requestId: string }).requestId,
      expect: FIXTURE_BASIS,
    });
    for (const r of [preview, real])
      expect([r.headers['content-type'], r.headers['x-inbox-console']]).toEqual(['application/json', '1']);
    expect(gate.held).toBe(2);
    await page.close();
  });

  it('shows a refusal with its reason, and an API error in words', async () => {
    const page = await browser.newPage();
    await openView(page, `${server.url}#/instances/pi-c-4711`, 'instance');
    await testid(page, `repair-cancel-token-${REFUSED_TOKEN}`).click();
    await releaseNext(gate);
    await expect(testid(page, 'repair-refused').textContent()).resolves.toContain(REFUSAL);
    expect(await testid(page, 'repair-confirm').isDisabled()).toBe(true);
    await testid(page, 'repair-close').click();

    await page.goto(`${server.url}#/documents/gone-42`);
    await page.locator('body[data-loaded="error"]').waitFor({ state: 'attached' });
    await expect(testid(page, 'error-message').textContent()).resolves.toBe('no inbox document gone-42 (HTTP 404)');
    await page.close();
  });

  it('lists documents a page at a time with a "next page" link that carries the cursor and the filters', async () => {
    const page = await browser.newPage();
    await openView(page, `${server.url}#/documents?status=PARKED&reason=AMBIGUOUS`, 'documents');
    expect(await page.locator('[data-testid="document-row"]').count()).toBe(1);
    expect(await testid(page, 'next-page').getAttribute('href')).toBe(
      '#/documents?status=PARKED&reason=AMBIGUOUS&after=doc-0050',
    );
    await testid(page, 'next-page').click();
    await waitLoaded(page, 'documents');
    await page.locator('[data-testid="document-row"][data-id="doc-0050"]').waitFor();
    const asked = server.requests.filter((r) => r.path === '/api/documents').length;
    expect(asked).toBeGreaterThanOrEqual(2);
    await page.close();
  });
});

describe('console page: a viewer', () => {
  let browser: Browser;
  let server: PageServer;

  beforeAll(async () => {
    server = await servePage(routes(WHOAMI.iamViewer, null));
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  it('sees the instance, no repair buttons, and why', async () => {
    const page = await browser.newPage();
    await openView(page, `${server.url}#/instances/pi-c-4711`, 'instance');
    expect(await page.locator('svg [data-element-id="waitForCompletion"]').count()).toBeGreaterThan(0);
    expect(await page.locator('button[data-testid^="repair-"]').count()).toBe(0);
    await expect(testid(page, 'viewer-note').textContent()).resolves.toBe(
      'You may look, not repair (ask to be added to INBOX_CONSOLE_REPAIRERS).',
    );
    expect(await testid(page, 'local-banner').count()).toBe(0);
    expect(server.requests.filter((r) => r.method === 'POST')).toEqual([]);
    await page.close();
  });
});
