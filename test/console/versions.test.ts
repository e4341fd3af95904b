/**
 * The console and process versions (issue 40): an instance's page draws
 * the version it runs on, not the deployed one, says which it is, and falls
 * back to the deployed model (saying so) when its version is not stored;
 * the instance list filters by version. v1 and v2 of
 * test/fixtures/bpmn-versions (v2 renames waitApproval to waitDecision and
 * adds audit), with v2 deployed (INBOX_BPMN_DIR); inboxConsole in local
 * access, served in this process on the emulator, its API over HTTP and its
 * page (dist/console-page, `npm run build:console`) in Debian's chromium.
 */
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadConfig } from '../../functions/src/config';
import { Engine } from '../../functions/src/engine/engine';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { InstancePage, InstanceView } from '../../functions/src/operations/types';
import { createRuntime } from '../../functions/src/runtime';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { FIXTURE_ENV, REPO_ROOT } from '../support/app';
import { type Browser, launchBrowser, openView, waitLoaded } from '../support/browser';
import { freshFirestores } from '../support/firestore';

jest.setTimeout(60_000);
const { db, projectId } = freshFirestores().project('console-versions');
const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const PAGE = join(REPO_ROOT, 'dist', 'console-page');
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);
const models = mkdtempSync(join(tmpdir(), 'console-versions-'));
copyFileSync(join(FIXTURES, 'v2.bpmn'), join(models, 'v2.bpmn'));

interface Version {
  readonly model: ProcessModel;
  readonly xml: string;
}
let v0: Version;
let v1: Version;
let v2: Version;
let server: Server;
let base: string;
let browser: Browser;
/** Instance ids by business key. */
const ids: Record<string, string> = {};

const load = async (xml: string): Promise<Version> => ({ model: await parseProcessModel(xml), xml });

async function start(v: Version, caseId: string): Promise<void> {
  const started = await startProcessInstance(db, new Engine([v.model], {}, STEPS), {
    processKey: 'case-handling',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  ids[caseId] = started.instance.id;
}

async function get<T>(path: string): Promise<{ status: number; body: T & { error?: string } }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as T & { error?: string } };
}

const listed = async (query: string): Promise<InstancePage> => {
  const res = await get<InstancePage>(`/api/instances?${query}`);
  expect(res.status).toBe(200);
  return res.body;
};

beforeAll(async () => {
  v1 = await load(await readFile(join(FIXTURES, 'v1.bpmn'), 'utf8'));
  v2 = await load(await readFile(join(FIXTURES, 'v2.bpmn'), 'utf8'));
  // A version of v1 that was never stored: what an instance started before versions were kept records.
  v0 = await load(`${v1.xml}\n<!-- an earlier edit -->\n`);
  await registerVersions(db, [v1.model], async () => v1.xml, new Date());
  await registerVersions(db, [v2.model], async () => v2.xml, new Date());
  await Promise.all([
    start(v1, 'C-v1-a'),
    start(v1, 'C-v1-b'),
    start(v1, 'C-v1-c'),
    start(v2, 'C-v2-a'),
    start(v0, 'C-v0-a'),
  ]);
  const deployed = new Engine([v2.model], {}, STEPS);
  const config = loadConfig({
    ...FIXTURE_ENV,
    INBOX_BPMN_DIR: models,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_CONSOLE_ACCESS: 'local',
  });
  http(
    'inboxConsoleVersionsTest',
    inboxConsoleFunctionWith(PAGE)(config, { ...createRuntime(config), db: () => db, engine: async () => deployed }),
  );
  server = getTestServer('inboxConsoleVersionsTest');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await browser?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(models, { recursive: true, force: true });
});

describe('the instance page draws the version the instance runs on', () => {
  test('an instance of v1, with v2 deployed: v1 XML and notes, its version and the deployed one named', async () => {
    const { status, body } = await get<InstanceView>(`/api/instances/${encodeURIComponent(ids['C-v1-a'] ?? '')}`);
    expect(status).toBe(200);
    expect(v1.model.version).not.toBe(v2.model.version);
    expect(body.row.processVersion).toBe(v1.model.version);
    expect(body.version).toEqual({ id: v1.model.version, deployed: v2.model.version, drawn: 'own' });
    expect(body.model?.version).toBe(v1.model.version);
    expect(body.model?.xml).toBe(v1.xml);
    const noted = body.model?.notes.map((n) => n.id) ?? [];
    expect(noted).toContain('waitApproval');
    expect(noted).not.toContain('waitDecision');
    expect(noted).not.toContain('audit');
  });

  test('an instance of the deployed v2: the deployed XML, drawn as its own', async () => {
    const { body } = await get<InstanceView>(`/api/instances/${encodeURIComponent(ids['C-v2-a'] ?? '')}`);
    expect(body.version).toEqual({ id: v2.model.version, deployed: v2.model.version, drawn: 'own' });
    expect(body.model?.xml).toBe(v2.xml);
    expect(body.model?.notes.map((n) => n.id)).toContain('waitDecision');
  });

  test('an instance whose version is not stored: the deployed model, and the view says it is not its own', async () => {
    const { body } = await get<InstanceView>(`/api/instances/${encodeURIComponent(ids['C-v0-a'] ?? '')}`);
    expect(body.version).toEqual({ id: v0.model.version, deployed: v2.model.version, drawn: 'deployed' });
    expect(body.model?.version).toBe(v2.model.version);
    expect(body.model?.xml).toBe(v2.xml);
  });
});

describe('the instance list filtered by version', () => {
  const v1Ids = (): string[] => ['C-v1-a', 'C-v1-b', 'C-v1-c'].map((k) => ids[k] ?? '').sort();

  test("a process version's instances, and only those, a page at a time in id order", async () => {
    const all = await listed(`process=case-handling&version=${v1.model.version}`);
    expect(all.instances.map((i) => i.id)).toEqual(v1Ids());
    expect(all.instances.every((i) => i.processVersion === v1.model.version)).toBe(true);
    expect(all.next).toBeNull();
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: InstancePage = await listed(
        `process=case-handling&version=${v1.model.version}&limit=2${after === null ? '' : `&after=${after}`}`,
      );
      expect(page.instances.length).toBeLessThanOrEqual(2);
      seen.push(...page.instances.map((i) => i.id));
      after = page.next;
    } while (after !== null);
    expect(seen).toEqual(v1Ids());
    const newest = await listed(`process=case-handling&version=${v2.model.version}`);
    expect(newest.instances.map((i) => i.id)).toEqual([ids['C-v2-a']]);
    expect((await listed(`process=case-handling&version=${v1.model.version}&status=RUNNING`)).instances).toHaveLength(
      3,
    );
    expect((await listed(`process=case-handling&version=${v1.model.version}&status=COMPLETED`)).instances).toEqual([]);
  });

  test("a business key's instances narrowed by version", async () => {
    const own = await listed(`businessKey=C-v1-a&version=${v1.model.version}`);
    expect(own.instances.map((i) => i.id)).toEqual([ids['C-v1-a']]);
    expect((await listed(`businessKey=C-v1-a&version=${v2.model.version}`)).instances).toEqual([]);
  });

  test('a version that is no hash, or a version without its process: 400 saying what to give', async () => {
    const bad = await get<unknown>('/api/instances?process=case-handling&version=v1');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/16 lowercase hex digits\s+→ at version/);
    const alone = await get<unknown>(`/api/instances?version=${v1.model.version}`);
    expect(alone.status).toBe(400);
    expect(alone.body.error).toMatch(/give businessKey, or process and version/);
    const paged = await get<unknown>('/api/instances?businessKey=C-v1-a&after=x');
    expect(paged.status).toBe(400);
    expect(paged.body.error).toMatch(/after pages a version/);
  });
});

describe('in the browser', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage();
  });
  const testid = (id: string) => page.locator(`[data-testid="${id}"]`);
  /** The elements the page's "How the model runs" table lists (the fixtures carry no diagram interchange, so bpmn-js draws no shapes for them). */
  const listedElements = (): Promise<Array<string | null>> =>
    page.locator('[data-testid="model-note-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));

  test("the v1 instance's page shows v1 (waitApproval, no audit) and names both versions; its version link lists v1's instances", async () => {
    await openView(page, `${base}/#/instances/${encodeURIComponent(ids['C-v1-a'] ?? '')}`, 'instance');
    const elements = await listedElements();
    expect(elements).toContain('waitApproval');
    expect(elements).not.toContain('waitDecision');
    expect(elements).not.toContain('audit');
    expect(await testid('instance-version').textContent()).toBe(v1.model.version.slice(0, 8));
    expect(await testid('instance-version-deployed').textContent()).toBe(
      ` (deployed now: ${v2.model.version.slice(0, 8)})`,
    );
    expect(await testid('diagram-fallback').count()).toBe(0);
    await testid('instance-version').click();
    await waitLoaded(page, 'instances');
    const rows = await page
      .locator('[data-testid="instance-row"]')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-id'), e.getAttribute('data-version')]));
    expect(rows.map(([id]) => id)).toEqual(['C-v1-a', 'C-v1-b', 'C-v1-c'].map((k) => ids[k] ?? '').sort());
    expect(new Set(rows.map(([, v]) => v))).toEqual(new Set([v1.model.version]));
  });

  test('an instance whose version is not stored: the deployed v2 shown, and the page says why', async () => {
    await openView(page, `${base}/#/instances/${encodeURIComponent(ids['C-v0-a'] ?? '')}`, 'instance');
    expect(await listedElements()).toContain('waitDecision');
    expect(await testid('diagram-fallback').textContent()).toContain(
      `version ${v0.model.version.slice(0, 8)}, which is not stored`,
    );
  });

  test('the version filter form lists the v2 instance', async () => {
    await openView(page, `${base}/#/instances`, 'instances');
    await testid('filter-process').fill('case-handling');
    await testid('filter-version').fill(v2.model.version);
    await testid('filter-apply').click();
    await page.locator('[data-testid="instances-version"]').waitFor();
    await waitLoaded(page, 'instances');
    const rows = await page
      .locator('[data-testid="instance-row"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    expect(rows).toEqual([ids['C-v2-a']]);
  });
});
