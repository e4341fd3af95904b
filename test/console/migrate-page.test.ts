/**
 * The console's migration view (issue 40): GET /api/versions lists a
 * process's versions with where their live tokens are and reads one stored
 * version with its XML and elements; in the browser, the view of the v1
 * instances draws both versions, maps waitApproval → waitDecision, previews
 * (a row per instance, WOULD_MIGRATE), migrates them with the preview's
 * expect, and the instances then run v2. The fixtures are
 * test/fixtures/bpmn-versions v1 and v2 with diagram interchange added
 * (test/support/bpmn-di.ts), so bpmn-js draws their shapes; v2 is deployed
 * (INBOX_BPMN_DIR). inboxConsole in local access (a repairer), served in
 * this process on the emulator, its page (dist/console-page,
 * `npm run build:console`) in Debian's chromium; and served as deployed
 * (dist/, `npm run build`) in iam access, where a viewer's signed token
 * gets the view without its buttons.
 */
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadConfig } from '../../functions/src/config';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import type { MigrationOutcomeView, ProcessVersionsView, VersionModelView } from '../../functions/src/operations/types';
import { createRuntime } from '../../functions/src/runtime';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { buildApp } from '../../tools/build/build-app';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { FIXTURE_ENV, REPO_ROOT } from '../support/app';
import { withDiagram } from '../support/bpmn-di';
import { type Browser, launchBrowser, openView, waitLoaded } from '../support/browser';
import { freshFirestores } from '../support/firestore';
import { createSigner } from '../support/tokens';

jest.setTimeout(60_000);
const { db, projectId } = freshFirestores().project('console-migrate-page');
const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const PAGE = join(REPO_ROOT, 'dist', 'console-page');
const SHOTS = join(REPO_ROOT, 'test-output', 'console');
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);
const models = mkdtempSync(join(tmpdir(), 'console-migrate-page-'));

/** The answer the page reads (operations/types.ts) is the operation's outcome: tsc checks that the two shapes agree. */
const asView = (outcome: MigrationOutcome): MigrationOutcomeView => outcome;

interface Version {
  readonly model: ProcessModel;
  readonly xml: string;
}
let v1: Version;
let v2: Version;
let server: Server;
let base: string;
/** The same console in iam access, where a signed token of VIEWER is a viewer; and the signer's certs. */
let iam: ServedFunction;
let iamBase: string;
let certs: Server;
let issuer = '';
/** The case deployed as an app at v2 (its handlers and message), for the console served as deployed. */
const V2_APP = 'test/fixtures/apps/case-handling-v2';
const VIEWER = 'viewer@example.test';
const AUDIENCE = 'https://inbox-console.example.test';
const signer = createSigner();
let browser: Browser;
/** The v1 instances waiting at waitApproval, and the one whose `prepare` job is pending. */
const waitingIds: string[] = [];
let preparingId = '';

const load = async (file: string): Promise<Version> => {
  const xml = withDiagram(await readFile(join(FIXTURES, file), 'utf8'), 'case-handling');
  return { model: await parseProcessModel(xml), xml };
};

async function get<T>(path: string): Promise<{ status: number; body: T & { error?: string } }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as T & { error?: string } };
}

const listen = async (s: Server): Promise<string> => {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

const versionOf = async (id: string): Promise<unknown> => (await refs.instance(db, id).get()).get('processVersion');

beforeAll(async () => {
  v1 = await load('v1.bpmn');
  v2 = await load('v2.bpmn');
  writeFileSync(join(models, 'v2.bpmn'), v2.xml);
  await registerVersions(db, [v1.model], async () => v1.xml, new Date(Date.now() - 60_000));
  await registerVersions(db, [v2.model], async () => v2.xml, new Date());
  const e1 = new Engine([v1.model], {}, STEPS);
  const start = (caseId: string) =>
    startProcessInstance(db, e1, {
      processKey: 'case-handling',
      businessKey: caseId,
      variables: { caseId },
      now: new Date(),
    });
  for (const caseId of ['C-wait-1', 'C-wait-2']) {
    const started = await start(caseId);
    for (const job of started.jobs) await completeJobCounted(db, e1, job, {}, new Date());
    waitingIds.push(started.instance.id);
  }
  waitingIds.sort();
  preparingId = (await start('C-prepare')).instance.id;
  const deployed = new Engine([v2.model], {}, STEPS);
  const config = loadConfig({
    ...FIXTURE_ENV,
    INBOX_BPMN_DIR: models,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_CONSOLE_ACCESS: 'local',
  });
  http(
    'inboxConsoleMigratePageTest',
    inboxConsoleFunctionWith(PAGE)(config, { ...createRuntime(config), db: () => db, engine: async () => deployed }),
  );
  server = getTestServer('inboxConsoleMigratePageTest');
  base = await listen(server);
  certs = createServer((_req, answer) => {
    answer.setHeader('content-type', 'application/json');
    answer.end(JSON.stringify(signer.certs));
  });
  issuer = await listen(certs);
  // Served in a child process, as deployed: the token check fetches the certs, which jest's VM cannot.
  await buildApp(V2_APP, models);
  iam = await serveFunction({
    target: 'inboxConsole',
    env: {
      INBOX_APP: V2_APP,
      INBOX_BPMN_DIR: models,
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST ?? '',
      INBOX_CONSOLE_ACCESS: 'iam',
      INBOX_CONSOLE_OIDC_ISSUER: issuer,
      INBOX_CONSOLE_OIDC_CERTS_URL: `${issuer}/certs`,
      INBOX_CONSOLE_AUDIENCES: AUDIENCE,
      INBOX_CONSOLE_VIEWERS: VIEWER,
    },
  });
  iamBase = iam.url.replace(/\/$/, '');
  browser = await launchBrowser();
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await browser?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await iam?.stop();
  for (const s of [server, certs])
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  rmSync(models, { recursive: true, force: true });
});

describe('GET /api/versions', () => {
  test("a process's versions: stored oldest first, the deployed one named, live instances and where their tokens are", async () => {
    const { status, body } = await get<ProcessVersionsView>('/api/versions?process=case-handling');
    expect(status).toBe(200);
    expect(body.processKey).toBe('case-handling');
    expect(body.deployedVersion).toBe(v2.model.version);
    expect(body.capped).toBe(false);
    expect(body.versions.map((v) => [v.version, v.stored, v.deployed, v.live])).toEqual([
      [v1.model.version, true, false, 3],
      [v2.model.version, true, true, 0],
    ]);
    expect(body.versions[0]?.waiting).toEqual({ waitApproval: 2, prepare: 1 });
    expect(body.versions[1]?.waiting).toEqual({});
  });

  test('one stored version by a prefix of 8: its XML and its elements with their kinds', async () => {
    const { status, body } = await get<VersionModelView>(
      `/api/versions/${v2.model.version.slice(0, 8)}?process=case-handling`,
    );
    expect(status).toBe(200);
    expect(body.version).toBe(v2.model.version);
    expect(body.deployed).toBe(true);
    expect(body.xml).toBe(v2.xml);
    const byId = new Map(body.elements.map((e) => [e.id, e]));
    expect(byId.get('waitDecision')).toEqual({ id: 'waitDecision', name: null, kind: 'receiveTask', scope: null });
    expect(byId.get('audit')?.kind).toBe('serviceTask');
    expect(byId.has('waitApproval')).toBe(false);
    expect(body.elements.map((e) => e.id)).toEqual(Object.keys(v2.model.nodes).sort());
  });

  test('no process, a version that is no hex, a version not stored, a POST: each answered with what to do', async () => {
    const bare = await get<unknown>('/api/versions');
    expect(bare.status).toBe(400);
    expect(bare.body.error).toMatch(/give process=KEY/);
    const bad = await get<unknown>('/api/versions/v1?process=case-handling');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/not a version: v1 \(8 to 16 lowercase hex digits/);
    const missing = await get<unknown>('/api/versions/ffffffffffffffff?process=case-handling');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/no stored version ffffffffffffffff of process case-handling: `inbox versions/);
    const posted = await fetch(`${base}/api/versions?process=case-handling`, { method: 'POST' });
    expect(posted.status).toBe(405);
  });
});

describe('the migration view in the browser', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage();
  });
  const testid = (id: string) => page.locator(`[data-testid="${id}"]`);
  const rowsOf = (id: string): Promise<Array<[string | null, string | null]>> =>
    page
      .locator(`[data-testid="${id}"]`)
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-id'), e.getAttribute('data-verdict')] as const))
      .then((rows) => rows.map(([a, b]) => [a, b]));

  test('a viewer sees the view without its buttons, and no way to it from the list', async () => {
    const viewerPage = await browser.newPage();
    await viewerPage.setExtraHTTPHeaders({
      Authorization: `Bearer ${signer.token({ iss: issuer, aud: AUDIENCE, email: VIEWER })}`,
    });
    try {
      await openView(
        viewerPage,
        `${iamBase}/#/instances?process=case-handling&version=${v1.model.version}`,
        'instances',
      );
      expect(await viewerPage.getByTestId('whoami').textContent()).toContain(`${VIEWER} (viewer)`);
      expect(await viewerPage.getByTestId('instance-row').count()).toBe(3);
      expect(await viewerPage.getByTestId('migrate-version').count()).toBe(0);
      await openView(viewerPage, `${iamBase}/#/migrate?process=case-handling&from=${v1.model.version}`, 'migrate');
      await viewerPage.locator(`[data-testid="migrate-view"][data-target="${v2.model.version}"]`).waitFor();
      expect(await viewerPage.getByTestId('mapping-row').count()).toBe(2);
      expect(await viewerPage.getByTestId('migrate-viewer').textContent()).toContain('not migrate');
      expect(await viewerPage.locator('button[data-testid^="migrate-"]').count()).toBe(0);
    } finally {
      await viewerPage.close();
    }
  });

  test("from a v1 instance's page: only its tokens to map, and a preview of it alone", async () => {
    const id = waitingIds[0] ?? '';
    await openView(page, `${base}/#/instances/${encodeURIComponent(id)}`, 'instance');
    await testid('migrate-instance').click();
    await waitLoaded(page, 'migrate');
    await page.locator(`[data-testid="migrate-view"][data-target="${v2.model.version}"]`).waitFor();
    const sources = await page
      .locator('[data-testid="mapping-row"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-source')));
    expect(sources).toEqual(['waitApproval']);
    await testid('mapping-target-waitApproval').selectOption('waitDecision');
    expect(await testid('migrate-cli').textContent()).toMatch(
      /--map waitApproval=waitDecision --instances \S+ --dry-run$/,
    );
    await testid('migrate-preview').click();
    await testid('migration-preview-summary').waitFor();
    expect(await rowsOf('migration-preview-row')).toEqual([[id, 'WOULD_MIGRATE']]);
    expect(await testid('migrate-confirm').textContent()).toBe('Migrate 1 instance');
    expect(await versionOf(id)).toBe(v1.model.version);
  });

  test('without a target for waitApproval: the preview refuses each waiting instance with the reason', async () => {
    await openView(page, `${base}/#/migrate?process=case-handling&from=${v1.model.version}`, 'migrate');
    await page.locator(`[data-testid="migrate-view"][data-target="${v2.model.version}"]`).waitFor();
    await testid('migrate-preview').click();
    await testid('migration-preview-summary').waitFor();
    expect(await rowsOf('migration-preview-row')).toEqual(
      [...waitingIds.map((id) => [id, 'REFUSED']), [preparingId, 'WOULD_MIGRATE']].sort(),
    );
    const reasons = await page.locator('[data-testid="migration-reason"]').allTextContents();
    expect(reasons).toHaveLength(2);
    for (const reason of reasons) expect(reason).toMatch(/waitApproval/);
    expect(await testid('migration-preview-summary').textContent()).toBe('1 would migrate, 2 refused.');
  });

  test('from the v1 list: both diagrams, waitApproval → waitDecision, the preview per instance, then migrated to v2', async () => {
    await openView(page, `${base}/#/instances?process=case-handling&version=${v1.model.version}`, 'instances');
    await testid('migrate-version').click();
    await waitLoaded(page, 'migrate');
    await page.locator(`[data-testid="migrate-view"][data-target="${v2.model.version}"]`).waitFor();
    expect(await testid('migrate-from').getAttribute('title')).toBe(v1.model.version);

    // Both versions drawn by bpmn-js, each with its own elements.
    const source = testid('diagram-source');
    const target = testid('diagram-target');
    expect(await source.locator('.djs-container svg').count()).toBe(1);
    expect(await target.locator('.djs-container svg').count()).toBe(1);
    expect(await source.locator('[data-element-id="waitApproval"]').count()).toBe(1);
    expect(await target.locator('[data-element-id="waitDecision"]').count()).toBe(1);
    expect(await target.locator('[data-element-id="audit"]').count()).toBe(1);
    expect(await source.locator('[data-element-id="audit"]').count()).toBe(0);
    expect(await source.locator('[data-testid="badge-tokens-waitApproval"]').textContent()).toBe('2');

    // A row per element live tokens sit at; prepare keeps its id, waitApproval has none in v2 to default to.
    const sources = await page
      .locator('[data-testid="mapping-row"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-source')));
    expect(sources).toEqual(['prepare', 'waitApproval']);
    expect(await testid('mapping-target-prepare').inputValue()).toBe('prepare');
    expect(await testid('mapping-target-waitApproval').inputValue()).toBe('');
    const offered = await testid('mapping-target-waitApproval')
      .locator('option')
      .evaluateAll((els) => els.map((e) => e.getAttribute('value')));
    expect(offered).toEqual(['', 'waitDecision']);
    await testid('mapping-target-waitApproval').selectOption('waitDecision');
    expect(await testid('migrate-cli').textContent()).toBe(
      `inbox migrate --process case-handling --from ${v1.model.version} --to ${v2.model.version} --map waitApproval=waitDecision --all --dry-run`,
    );

    await testid('migrate-preview').click();
    await testid('migration-preview-summary').waitFor();
    expect(await rowsOf('migration-preview-row')).toEqual(
      [...waitingIds, preparingId].sort().map((id) => [id, 'WOULD_MIGRATE']),
    );
    const moves = await page
      .locator('[data-testid="migration-preview-row"] [data-testid="migration-move"]')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-from')}→${e.getAttribute('data-to')}`));
    expect(moves.sort()).toEqual(['prepare→prepare', 'waitApproval→waitDecision', 'waitApproval→waitDecision']);
    expect(await testid('migration-preview-summary').textContent()).toBe('3 would migrate.');
    // For a person to look at (test-output/ is not committed).
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'migrate.png'), fullPage: true });
    for (const id of [...waitingIds, preparingId]) expect(await versionOf(id)).toBe(v1.model.version);

    expect(await testid('migrate-confirm').textContent()).toBe('Migrate 3 instances');
    await testid('migrate-confirm').click();
    await testid('migration-result-summary').waitFor();
    expect(await rowsOf('migration-result-row')).toEqual(
      [...waitingIds, preparingId].sort().map((id) => [id, 'MIGRATED']),
    );
    expect(await testid('migrate-confirm').isDisabled()).toBe(true);
    for (const id of [...waitingIds, preparingId]) expect(await versionOf(id)).toBe(v2.model.version);

    await testid('migrate-target-instances').click();
    await waitLoaded(page, 'instances');
    const listed = await page
      .locator('[data-testid="instance-row"]')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-id'), e.getAttribute('data-version')]));
    expect(listed).toEqual([...waitingIds, preparingId].sort().map((id) => [id, v2.model.version]));

    // Nothing live is left at v1: a preview of every instance of it finds none.
    const res = await fetch(`${base}/api/migrations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-inbox-console': '1', 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({
        processKey: 'case-handling',
        from: v1.model.version,
        to: v2.model.version,
        instances: 'all',
        preview: true,
      }),
    });
    expect(res.status).toBe(200);
    expect(asView((await res.json()) as MigrationOutcome).instances).toEqual([]);
  });
});
