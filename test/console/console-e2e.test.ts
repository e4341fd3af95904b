import { PubSub } from '@google-cloud/pubsub';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { runCli } from '../../functions/src/cli/main';
import { LOCAL_OPERATOR } from '../../functions/src/console/access';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { subscriptionOf, topicOf } from '../../tools/local/peers';
import { startLocalStack, type LocalStack } from '../../tools/local/stack';
import { COMPLETION_ATTRIBUTES, completionOf, type PeerScript } from '../fixtures/app/local';
import { launchBrowser, openView, waitLoaded, type Browser } from '../support/browser';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { waitFor } from '../support/wait';
import { FIXTURE_APP, FIXTURE_ENV, modelsDirWith, SETTLEMENTS, settlementRef } from '../support/app';

/**
 * The console end to end: `npm start`'s stack (every function served from
 * dist/, the relay on its schedule, Pub/Sub push, Cloud Tasks) with its
 * inboxConsole in local mode, browsed by Debian's chromium. A case is
 * left with two tokens by a forced repair, its completion parks as
 * AMBIGUOUS_CORRELATION, and the operator clears it from the page alone:
 * cancel one token, requeue the completion, the case completes and is
 * settled once. A case with a person's review beside its hand-over
 * (test/fixtures/bpmn-review/fixture-review.bpmn, in INBOX_BPMN_DIR with
 * the fixture app's model) is completed from the user-task pages.
 * Screenshots go to test-output/console/.
 */
jest.setTimeout(180_000);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('console-e2e');
const SHOTS = join(__dirname, '..', '..', 'test-output', 'console');
const CASE = 'C-console-e2e-1';
const DONE_CASE = 'C-console-e2e-done';
const OLD_CASE = 'C-console-e2e-old';
const REVIEW_CASE = 'C-console-e2e-review';
const COMPLETION_ID = messageDocId('TaskCompleted', CASE, `done-${CASE}`);
const models = modelsDirWith(join(__dirname, '..', 'fixtures', 'bpmn-review', 'fixture-review.bpmn'));
let stack: LocalStack;
let browser: Browser;
let page: Page;
let base: string;
let instanceId: string;

const at = (hash: string): string => `${base}/#${hash}`;

async function startCase(caseId: string, peerScript: PeerScript, processKey = 'fixture-process'): Promise<void> {
  const { functions } = await stack.info();
  const body = JSON.stringify({
    processKey,
    businessKey: caseId,
    variables: { caseId, peerScript },
  });
  const res = await fetch(functions.startProcess, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(res.status).toBe(201);
}

/** The CLI, as an operator types it, on the stack's project. */
async function cli(...argv: string[]): Promise<string> {
  let out = '';
  const code = await runCli(
    argv,
    { out: (t) => (out += `${t}\n`), err: (t) => (out += `${t}\n`), confirm: async () => true },
    {
      ...process.env,
      ...FIXTURE_ENV,
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: (await stack.info()).firestoreHost,
    },
  );
  if (code !== 0) throw new Error(`inbox ${argv.join(' ')} exited ${code}:\n${out}`);
  return out;
}

const instanceOf = async (caseId: string): Promise<FirebaseFirestore.QueryDocumentSnapshot | undefined> =>
  (await db.collection(COLLECTIONS.instances).where('businessKey', '==', caseId).get()).docs[0];

/** Counts by status and by reason, straight from Firestore (the overview must show these). */
async function firestoreCounts(): Promise<{ status: Record<string, number>; reasons: Record<string, number> }> {
  const all = (await db.collection(INBOX).get()).docs.map((d) => d.data());
  const status: Record<string, number> = { OPEN: 0, DONE: 0, PARKED: 0 };
  const reasons: Record<string, number> = {};
  for (const d of all) {
    status[String(d.status)] = (status[String(d.status)] ?? 0) + 1;
    if (d.status === 'PARKED') reasons[String(d.reason)] = (reasons[String(d.reason)] ?? 0) + 1;
  }
  return { status, reasons };
}

/** Opens the repair dialog by its button (fills its fields, asks for the preview), waits for the preview, confirms; returns the outcome's text. */
async function previewAndConfirm(buttonTestId: string, fields: Readonly<Record<string, string>> = {}): Promise<string> {
  await page.getByTestId(buttonTestId).click();
  const dialog = page.getByTestId('repair-dialog');
  // A dialog without fields asks for its preview at once; one with fields when the operator says so.
  if (Object.keys(fields).length > 0) {
    for (const [name, value] of Object.entries(fields)) await dialog.getByTestId(`repair-field-${name}`).fill(value);
    await dialog.getByTestId('repair-preview').click();
  }
  await dialog.getByTestId('repair-preview-outcome').waitFor();
  await dialog.getByTestId('repair-confirm').click();
  const result = dialog.getByTestId('repair-result');
  await result.waitFor();
  const text = (await result.textContent()) ?? '';
  await dialog.getByTestId('repair-close').click();
  return text;
}

/** Waits until the instance view has been drawn again without the element `testid` (after a confirmed repair). */
async function redrawnWithout(testid: string): Promise<void> {
  // show() drops the old view (and its "loaded" mark) at once, so once the button is gone the next mark is the new view's.
  await page.getByTestId(testid).waitFor({ state: 'detached', timeout: 15_000 });
  await waitLoaded(page, 'instance');
  expect(await page.getByTestId(testid).count()).toBe(0);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  stack = await startLocalStack({
    projectId,
    app: FIXTURE_APP,
    peers: { delayMs: 100 },
    relayEveryMs: 500,
    env: { INBOX_BPMN_DIR: models.dir },
  });
  base = (await stack.info()).consoleUrl.replace(/\/$/, '');
  browser = await launchBrowser();
  page = await browser.newPage();

  // One case that goes the usual way, so the overview has DONE documents too.
  await startCase(DONE_CASE, 'answer');
  // The other is left with two tokens on "Wait for completion" by a forced repair (the demo's "double token").
  await startCase(CASE, 'silent');
  instanceId = await waitFor(
    `${CASE} to wait for its completion`,
    async () => {
      const key = await refs.correlationKey(db, CASE).get();
      return ((key.get('waiting') ?? []) as Array<{ processInstanceId?: string }>)[0]?.processInstanceId;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
  await cli('repair', 'move-token', '--instance', instanceId, '--activity', 'waitForCompletion', '--force');
  const pubsub = new PubSub({ projectId, apiEndpoint: (await stack.info()).pubsubHost });
  try {
    await pubsub
      .topic(topicOf((await stack.info()).topology, 'TaskCompleted'))
      .publishMessage({ json: completionOf(CASE), attributes: COMPLETION_ATTRIBUTES });
  } finally {
    await pubsub.close();
  }
  await waitFor(
    'the completion to park as AMBIGUOUS_CORRELATION',
    async () => {
      const d = await db.collection(INBOX).doc(COMPLETION_ID).get();
      return d.get('reason') === 'AMBIGUOUS_CORRELATION' ? true : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
  await waitFor(
    `${DONE_CASE} to be settled`,
    async () => ((await settlementRef(db, DONE_CASE).get()).exists ? true : undefined),
    { timeoutMs: 60_000, everyMs: 200 },
  );
});

firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await browser?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the same
  await stack?.stop();
  models.remove();
});

test('the overview shows the counts by status and by reason that Firestore holds', async () => {
  // Nothing moves any more (both cases settled), so one reading of each side compares.
  const before = await firestoreCounts();
  await openView(page, at('/'), 'overview');
  const shown = async (testid: string): Promise<number> =>
    Number(await page.getByTestId(`${testid}-value`).textContent());
  expect({
    OPEN: await shown('figure-open'),
    DONE: await shown('figure-done'),
    PARKED: await shown('figure-parked'),
  }).toEqual(before.status);
  expect(before.status.DONE).toBeGreaterThan(0);
  expect(before.status.PARKED).toBeGreaterThan(0);
  const rows = await page
    .getByTestId('parked-reason-row')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-reason') ?? '', tr.querySelectorAll('td')[1]?.textContent ?? '']),
    );
  const byReason = Object.fromEntries(rows.map(([r, n]) => [r, Number(n)]));
  for (const [reason, n] of Object.entries(byReason))
    expect([reason, n]).toEqual([reason, before.reasons[reason] ?? 0]);
  expect(byReason.AMBIGUOUS_CORRELATION).toBe(1);
  expect(await firestoreCounts()).toEqual(before);
  await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
});

test("the header names the app the stack runs; the message filters of the documents and waiting lists offer the app's message names", async () => {
  await openView(page, at('/documents'), 'documents');
  expect(await page.getByTestId('whoami').textContent()).toBe(
    `${LOCAL_OPERATOR} (repairer) · ${projectId} · app fixture`,
  );
  const offered = await page
    .getByTestId('app-messages')
    .evaluate((list) => [...list.querySelectorAll('option')].map((o) => o.getAttribute('value')));
  expect(offered).toEqual(['TaskCompleted', 'TaskOpened']);
  expect(await page.getByTestId('filter-messageName').getAttribute('list')).toBe('app-messages');
  await openView(page, at('/waiting'), 'waiting');
  expect(await page.getByTestId('filter-message').getAttribute('list')).toBe('app-messages');
});

test('the double-token instance: two tokens on "Wait for completion" in the diagram, its parked completion below', async () => {
  await openView(page, at(`/instances/${instanceId}`), 'instance');
  const badge = page.getByTestId('diagram').getByTestId('badge-tokens-waitForCompletion');
  expect((await badge.textContent())?.trim()).toBe('2');
  // Both tokens wait for the completion there, and each has its incident (a duplicate waiting point).
  expect((await page.getByTestId('diagram').getByTestId('badge-waiting-waitForCompletion').textContent())?.trim()).toBe(
    '✉2',
  );
  expect(
    (await page.getByTestId('diagram').getByTestId('badge-incidents-waitForCompletion').textContent())?.trim(),
  ).toBe('!2');
  expect(
    await page
      .getByTestId('token-row')
      .evaluateAll((trs) => trs.filter((tr) => tr.getAttribute('data-activity-id') === 'waitForCompletion').length),
  ).toBe(2);
  const parked = page.getByTestId('parked').getByTestId('document-row');
  expect(await parked.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')))).toEqual([COMPLETION_ID]);
  expect(await parked.textContent()).toContain('AMBIGUOUS_CORRELATION');
  // What each element of its model runs, as the engine read it: the receive task waits under the variable caseId.
  const noted = page.getByTestId('model-notes').getByTestId('model-notes-table');
  const note = noted.locator('[data-testid="model-note-row"][data-id="waitForCompletion"]');
  expect(await note.locator('td').allTextContents()).toEqual([
    'waitForCompletion',
    'receiveTask',
    'waits for TaskCompleted, key variable caseId',
  ]);
  // The window (1280×900): the diagram with its badges, the tokens and the incidents; the whole page besides.
  await page.screenshot({ path: join(SHOTS, 'instance-double-token.png') });
  await page.screenshot({ path: join(SHOTS, 'instance-double-token-full.png'), fullPage: true });

  await openView(page, at('/documents?status=PARKED'), 'documents');
  await page.screenshot({ path: join(SHOTS, 'documents.png'), fullPage: true });
  await openView(page, at(`/documents/${COMPLETION_ID}`), 'document');
  expect(await page.getByTestId('document-status').textContent()).toContain('AMBIGUOUS_CORRELATION');
  await page.screenshot({ path: join(SHOTS, 'document.png'), fullPage: true });
});

/**
 * A case whose token has waited for its completion for 20 days (the
 * threshold is INBOX_WAITING_ALERT_DAYS, 15): started by the engine in this
 * process, its hand-over job completed as of 20 days ago. The start is dated
 * an hour ahead, so the stack's sweep (which dispatches PENDING jobs older
 * than its grace period) never takes the job before this test completes it;
 * the deadline timer is set beyond the 20 days, so nothing fires.
 */
async function longWaitingCase(caseId: string): Promise<string> {
  const engine = await fixtureEngine();
  const variables = { caseId, peerScript: 'silent', completionDeadline: 'P60D' };
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables,
    now: new Date(Date.now() + 3_600_000),
  });
  const job = started.jobs[0];
  if (job === undefined) throw new Error('the case started no job');
  await completeJobRun(db, engine, job, {}, new Date(Date.now() - 20 * 86_400_000));
  return started.instance.id;
}

test("the overview's figures link to their lists: open incidents to the double token, waiting too long to a 20-day wait", async () => {
  const oldInstance = await longWaitingCase(OLD_CASE);
  await openView(page, at('/'), 'overview');
  expect(Number(await page.getByTestId('figure-incidents-value').textContent())).toBeGreaterThan(0);
  await page.getByTestId('figure-incidents').getByRole('link').click();
  await waitLoaded(page, 'incidents');
  const incident = page.locator(`[data-testid="incident-row"][data-instance-id="${instanceId}"]`);
  expect(await incident.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-reason')))).toContain(
    'DUPLICATE_WAITING_POINT',
  );
  await page.screenshot({ path: join(SHOTS, 'incidents.png'), fullPage: true });
  await incident.first().getByTestId('incident-instance').click();
  await waitLoaded(page, 'instance');
  expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/instances/${instanceId}`);

  await openView(page, at('/'), 'overview');
  // Only the 20-day wait is over the threshold: the double token and the settled case are fresh.
  const tooLong = page.getByTestId('waiting-too-long-TaskCompleted');
  expect((await tooLong.textContent())?.trim()).toBe('1');
  await tooLong.click();
  await waitLoaded(page, 'waiting');
  const rows = page.getByTestId('waiting-point-row');
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-instance-id')))).toEqual([oldInstance]);
  expect(await rows.first().textContent()).toContain('20 d');
  await page.screenshot({ path: join(SHOTS, 'waiting.png'), fullPage: true });
  await rows.first().getByTestId('waiting-instance').click();
  await waitLoaded(page, 'instance');
  expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/instances/${oldInstance}`);
});

test('from the page: cancel one token, resolve the incident, requeue the completion; the case completes with one settlement, repairs record the console', async () => {
  await openView(page, at(`/instances/${instanceId}`), 'instance');
  const tokens = await page
    .getByTestId('token-row')
    .evaluateAll((trs) =>
      trs
        .filter((tr) => tr.getAttribute('data-activity-id') === 'waitForCompletion')
        .map((tr) => tr.getAttribute('data-id') ?? ''),
    );
  expect(tokens).toHaveLength(2);
  const cancelled = tokens[1] ?? '';
  expect(await previewAndConfirm(`repair-cancel-token-${cancelled}`)).toContain(LOCAL_OPERATOR);
  // The dialog's close renders the view again (the close event comes a task later): the cancelled token has no button any more.
  await redrawnWithout(`repair-cancel-token-${cancelled}`);
  expect(
    (await page.getByTestId('diagram').getByTestId('badge-tokens-waitForCompletion').textContent())?.trim(),
  ).not.toBe('2');

  // The forced move opened an incident (a duplicate waiting point); with the second token gone its cause is too.
  expect(await page.getByTestId('incident-row').count()).toBeGreaterThan(0);
  expect(
    await previewAndConfirm('repair-resolve-incident', { note: 'second token cancelled from the console' }),
  ).toContain(LOCAL_OPERATOR);
  await redrawnWithout('repair-resolve-incident');

  await openView(page, at(`/documents/${COMPLETION_ID}`), 'document');
  expect(await previewAndConfirm('repair-requeue')).toContain(LOCAL_OPERATOR);
  await waitFor(
    `${CASE} to be COMPLETED and settled`,
    async () => {
      const instance = await instanceOf(CASE);
      return instance?.get('status') === 'COMPLETED' && (await settlementRef(db, CASE).get()).exists ? true : undefined;
    },
    { timeoutMs: 90_000, everyMs: 250 },
  );
  const settlements = (await db.collection(SETTLEMENTS).get()).docs.filter((d) => d.get('caseId') === CASE);
  expect(settlements).toHaveLength(1);
  expect((await db.collection(INBOX).doc(COMPLETION_ID).get()).get('status')).toBe('DONE');

  const records = async (ref: FirebaseFirestore.DocumentReference): Promise<Array<Record<string, unknown>>> =>
    ((await ref.get()).get('repairs') ?? []) as Array<Record<string, unknown>>;
  const onInstance = await records(db.collection(COLLECTIONS.instances).doc(instanceId));
  const onDocument = await records(db.collection(INBOX).doc(COMPLETION_ID));
  expect(onInstance.find((r) => r.kind === 'cancel-token')).toMatchObject({ by: LOCAL_OPERATOR, via: 'console' });
  expect(onInstance.find((r) => r.kind === 'resolve-incident')).toMatchObject({ by: LOCAL_OPERATOR, via: 'console' });
  // The CLI's forced move is recorded as the CLI's.
  expect(onInstance.find((r) => r.kind === 'move-token')).toMatchObject({ via: 'cli' });
  expect(onDocument.find((r) => r.kind === 'requeue')).toMatchObject({ by: LOCAL_OPERATOR, via: 'console' });
  // And the page shows them as stored.
  await openView(page, at(`/documents/${COMPLETION_ID}`), 'document');
  expect(await page.getByTestId('repair-record').first().textContent()).toContain('console');
});

test("a refused repair shows the API's reason: requeue of a document that is DONE", async () => {
  await openView(page, at(`/documents/${COMPLETION_ID}`), 'document');
  const answer = page.waitForResponse((res) => res.url().endsWith('/api/repairs') && res.request().method() === 'POST');
  await page.getByTestId('repair-requeue').click();
  const res = await answer;
  expect(res.status()).toBe(409);
  const body = (await res.json()) as { error: string; refused: boolean };
  expect(body.refused).toBe(true);
  const refused = page.getByTestId('repair-dialog').getByTestId('repair-refused');
  await refused.waitFor();
  expect(await refused.textContent()).toContain(body.error);
  expect(await page.getByTestId('repair-confirm').isDisabled()).toBe(true);
  await page.getByTestId('repair-close').click();
  expect((await db.collection(INBOX).doc(COMPLETION_ID).get()).get('status')).toBe('DONE');
});

test('Confirm is held to its preview: a completion that moves the token after the preview makes Confirm a refusal, and the case is still settled', async () => {
  const HELD_CASE = 'C-console-e2e-held';
  await startCase(HELD_CASE, 'silent');
  const heldInstance = await waitFor(
    `${HELD_CASE} to wait for its completion`,
    async () => {
      const key = await refs.correlationKey(db, HELD_CASE).get();
      return ((key.get('waiting') ?? []) as Array<{ processInstanceId?: string }>)[0]?.processInstanceId;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
  await openView(page, at(`/instances/${heldInstance}`), 'instance');
  const token = (await page.getByTestId('token-row').first().getAttribute('data-id')) ?? '';
  await page.getByTestId(`repair-cancel-token-${token}`).click();
  const dialog = page.getByTestId('repair-dialog');
  await dialog.getByTestId('repair-preview-outcome').waitFor();
  expect(await dialog.getByTestId('repair-preview-outcome-basis').textContent()).toContain('at waitForCompletion');

  // The completion arrives while the operator reads the preview: it correlates, and "Settle" runs.
  const pubsub = new PubSub({ projectId, apiEndpoint: (await stack.info()).pubsubHost });
  try {
    await pubsub
      .topic(topicOf((await stack.info()).topology, 'TaskCompleted'))
      .publishMessage({ json: completionOf(HELD_CASE), attributes: COMPLETION_ATTRIBUTES });
  } finally {
    await pubsub.close();
  }
  await waitFor(
    `the token of ${HELD_CASE} to leave "Wait for completion"`,
    async () => {
      const tokens = ((await refs.instance(db, heldInstance).get()).get('tokens') ?? {}) as Record<
        string,
        { activityId?: string }
      >;
      return tokens[token]?.activityId !== 'waitForCompletion' ? true : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );

  const answer = page.waitForResponse((res) => res.url().endsWith('/api/repairs') && res.request().method() === 'POST');
  await dialog.getByTestId('repair-confirm').click();
  const res = await answer;
  expect(res.status()).toBe(409);
  const refused = dialog.getByTestId('repair-refused');
  await refused.waitFor();
  expect(await refused.textContent()).toMatch(
    /the token (moved from Wait for completion \(waitForCompletion\) to|ended at) .* since the preview/,
  );
  await page.screenshot({ path: join(SHOTS, 'repair-held-to-preview.png') });
  await dialog.getByTestId('repair-close').click();
  await waitFor(
    `${HELD_CASE} to be COMPLETED and settled`,
    async () => {
      const instance = await instanceOf(HELD_CASE);
      return instance?.get('status') === 'COMPLETED' && (await settlementRef(db, HELD_CASE).get()).exists
        ? true
        : undefined;
    },
    { timeoutMs: 90_000, everyMs: 250 },
  );
  expect(((await refs.instance(db, heldInstance).get()).get('repairs') ?? []) as unknown[]).toEqual([]);
});

/**
 * An unreadable completion, as a sender might publish one: an HTML page
 * where JSON was expected, with bytes that are not UTF-8. The receiver
 * parks it INVALID_PAYLOAD and keeps its bytes; the page shows them as text
 * (the script in them never runs) and downloads them exactly.
 */
const HOSTILE_HEAD =
  '<html><script>window.__ran = "script"; document.title = "ran"</script><img src="x" onerror="window.__ran = \'img\'">';
const HOSTILE_TAIL = ' £ </html>';
const HOSTILE = Buffer.concat([
  Buffer.from(HOSTILE_HEAD, 'utf8'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from(HOSTILE_TAIL, 'utf8'),
]);

test('an unreadable message: its bytes shown as text (a <script> in them is text, never run), said not UTF-8, downloaded byte for byte', async () => {
  const info = await stack.info();
  const pubsub = new PubSub({ projectId, apiEndpoint: info.pubsubHost });
  let messageId: string;
  try {
    messageId = await pubsub
      .topic(topicOf(info.topology, 'TaskCompleted'))
      .publishMessage({ data: HOSTILE, attributes: COMPLETION_ATTRIBUTES });
  } finally {
    await pubsub.close();
  }
  const id = invalidDocId(subscriptionOf(info.topology, projectId, 'TaskCompleted'), messageId);
  await waitFor(
    'the receiver to park it as INVALID_PAYLOAD',
    async () => ((await db.collection(INBOX).doc(id).get()).get('reason') === 'INVALID_PAYLOAD' ? true : undefined),
    { timeoutMs: 60_000, everyMs: 200 },
  );

  await openView(page, at(`/documents/${id}`), 'document');
  const raw = page.getByTestId('payload-raw');
  expect(await raw.count()).toBe(1);
  expect(await raw.getByTestId('payload-raw-text').textContent()).toBe(`${HOSTILE_HEAD}\uFFFD\uFFFD${HOSTILE_TAIL}`);
  expect(await raw.getByTestId('payload-raw-size').textContent()).toBe(
    `${HOSTILE.length} bytes (the message's data, decoded from base64).`,
  );
  expect(await raw.getByTestId('payload-raw-not-utf8').isVisible()).toBe(true);
  expect(await page.getByTestId('payload').textContent()).not.toContain('No payload.');
  // Text, not markup: no element came of it, nothing ran, the title is the page's own.
  expect(await raw.locator('script, img, html').count()).toBe(0);
  expect(await page.evaluate('typeof window.__ran')).toBe('undefined');
  expect(await page.title()).not.toBe('ran');
  await page.screenshot({ path: join(SHOTS, 'document-unreadable.png'), fullPage: true });

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    raw.getByTestId('payload-raw-download').click(),
  ]);
  expect(download.suggestedFilename()).toBe(`${id}.bin`);
  expect(readFileSync(await download.path()).equals(HOSTILE)).toBe(true);
});

/** The task page's completion form: fills in the variables, sends the form, returns the POST it made and the answer's element. */
async function sendCompletion(on: Page, variables: string | null, shown: string): Promise<Request> {
  const form = on.getByTestId('task-complete-form');
  if (variables !== null) await form.getByTestId('task-variables').fill(variables);
  const sent = on.waitForRequest((r) => r.url().endsWith('/complete') && r.method() === 'POST');
  await form.getByTestId('task-complete').click();
  const request = await sent;
  await form.getByTestId(shown).waitFor();
  return request;
}

test('user tasks: the list shows the open review, its page completes it, the instance moves on; the form again is already completed, another form is refused', async () => {
  await startCase(REVIEW_CASE, 'silent', 'fixture-review');
  const reviewInstance = (await waitFor(`${REVIEW_CASE} to start`, () => instanceOf(REVIEW_CASE), { everyMs: 200 })).id;
  const taskId = await waitFor(`the review of ${REVIEW_CASE} to open`, async () => {
    const open = await db.collection(COLLECTIONS.userTasks).where('processInstanceId', '==', reviewInstance).get();
    return open.docs[0]?.id;
  });

  // The list: the open review, who may do it; filtered by a candidate group, by another assignee, by two at once.
  await openView(page, at('/'), 'overview');
  await page.getByTestId('nav-tasks').click();
  await waitLoaded(page, 'tasks');
  const listed = page.locator(`[data-testid="task-row"][data-id="${taskId}"]`);
  expect(await listed.getAttribute('data-instance-id')).toBe(reviewInstance);
  for (const text of ['Review the case', 'review', REVIEW_CASE, 'ana', 'reviewers, leads', 'OPEN'])
    expect(await listed.textContent()).toContain(text);
  await page.screenshot({ path: join(SHOTS, 'tasks.png'), fullPage: true });
  const filtered = async (fields: Readonly<Record<string, string>>): Promise<string[]> => {
    await openView(page, at('/tasks'), 'tasks');
    for (const [name, value] of Object.entries(fields)) await page.getByTestId(`filter-${name}`).fill(value);
    await page.getByTestId('filter-apply').click();
    await waitLoaded(page, 'tasks');
    return page.getByTestId('task-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id') ?? ''));
  };
  expect(await filtered({ group: 'leads' })).toEqual([taskId]);
  expect(await filtered({ instance: reviewInstance })).toEqual([taskId]);
  expect(await filtered({ assignee: 'bob' })).toEqual([]);
  expect(await page.getByTestId('tasks-empty').count()).toBe(1);
  expect(await filtered({ assignee: 'ana', group: 'leads' })).toEqual([]);
  expect(await page.getByTestId('tasks-filter-invalid').textContent()).toContain('not by assignee and group');

  // The instance view: the token waiting at the review links to its task.
  await openView(page, at(`/instances/${reviewInstance}`), 'instance');
  const token =
    (await page.locator('[data-testid="token-row"][data-activity-id="review"]').getAttribute('data-id')) ?? '';
  const toTask = page.getByTestId(`token-user-task-${token}`);
  expect(await toTask.getAttribute('data-task-id')).toBe(taskId);
  await toTask.click();
  await waitLoaded(page, 'task');
  const fact = async (on: Page, name: string): Promise<string> =>
    (await on.getByTestId(`task-${name}`).textContent())?.trim() ?? '';
  expect({
    name: await fact(page, 'name'),
    activity: await fact(page, 'activity'),
    assignee: await fact(page, 'assignee'),
    groups: await fact(page, 'groups'),
    formKey: await fact(page, 'form-key'),
    status: await fact(page, 'status'),
    completedBy: await fact(page, 'completed-by'),
  }).toEqual({
    name: 'Review the case',
    activity: 'review',
    assignee: 'ana',
    groups: 'reviewers, leads',
    formKey: 'forms/review',
    status: 'OPEN',
    completedBy: '—',
  });
  expect(await page.getByTestId('task-instance-link').getAttribute('href')).toBe(
    `#/instances/${encodeURIComponent(reviewInstance)}`,
  );

  // A second operator has the same task open: a form of its own, another request id.
  const other = await browser.newPage();
  const posts: Request[] = [];
  const onPost = (r: Request): void => {
    if (r.method() === 'POST') posts.push(r);
  };
  try {
    await openView(other, at(`/tasks/${taskId}`), 'task');
    page.on('request', onPost);
    // Not an object: said in the page, nothing sent.
    await page.getByTestId('task-variables').fill('[1, 2]');
    await page.getByTestId('task-complete').click();
    expect(await page.getByTestId('task-complete-invalid').textContent()).toContain(
      'a JSON object of variables, not an array',
    );
    expect(posts).toEqual([]);

    const first = await sendCompletion(page, '{"approved": true}', 'task-completed');
    expect(await page.getByTestId('task-completed').textContent()).toContain(`Completed by ${LOCAL_OPERATOR}`);
    expect(await fact(page, 'status')).toBe('COMPLETED');
    expect(await fact(page, 'completed-by')).toBe(LOCAL_OPERATOR);
    await page.screenshot({ path: join(SHOTS, 'task-completed.png'), fullPage: true });
    // The same form again (a resend after a lost answer): the same request id, the same completion.
    const again = await sendCompletion(page, null, 'task-already-completed');
    const requestId = (first.postDataJSON() as { requestId: string }).requestId;
    expect((again.postDataJSON() as { requestId: string }).requestId).toBe(requestId);
    expect(await page.getByTestId('task-complete-form').getAttribute('data-request-id')).toBe(requestId);
    expect(await page.getByTestId('task-already-completed').textContent()).toContain('nothing changed');
    expect(posts).toHaveLength(2);

    // The other operator's form is another completion: refused with the reason.
    await sendCompletion(other, '{"approved": false}', 'task-complete-refused');
    expect(await other.getByTestId('task-complete-refused').textContent()).toMatch(
      new RegExp(`^Refused, nothing changed: user task .+ \\(review\\) is already completed by ${LOCAL_OPERATOR} at `),
    );
  } finally {
    page.off('request', onPost);
    await other.close();
  }

  // The instance moves on: the join has the hand-over and the review, the case is settled once.
  await waitFor(
    `${REVIEW_CASE} to be COMPLETED and settled`,
    async () => {
      const instance = await refs.instance(db, reviewInstance).get();
      return instance.get('status') === 'COMPLETED' && (await settlementRef(db, REVIEW_CASE).get()).exists
        ? true
        : undefined;
    },
    { timeoutMs: 90_000, everyMs: 250 },
  );
  expect((await refs.instance(db, reviewInstance).get()).get('variables')).toMatchObject({ approved: true });
  expect((await db.collection(COLLECTIONS.userTasks).doc(taskId).get()).data()).toMatchObject({
    status: 'COMPLETED',
    completedBy: LOCAL_OPERATOR,
  });
  await openView(page, at(`/instances/${reviewInstance}`), 'instance');
  expect(await page.getByTestId(`token-user-task-${token}`).count()).toBe(0);
  await openView(page, at(`/tasks/${taskId}`), 'task');
  expect(await page.getByTestId('task-complete-form').count()).toBe(0);
  expect(await page.getByTestId('task-closed-note').textContent()).toContain('COMPLETED');
  await openView(page, at('/tasks'), 'tasks');
  expect(await page.locator(`[data-testid="task-row"][data-id="${taskId}"]`).count()).toBe(0);
});

test('through `gcloud run services proxy` (its User-Agent first) the page says why it is refused and what to run instead', async () => {
  const proxied = await browser.newPage();
  try {
    await proxied.setExtraHTTPHeaders({
      'User-Agent': 'cloud-run-proxy/0.5.0 (linux/amd64) Mozilla/5.0 (X11; Linux x86_64)',
    });
    await proxied.goto(at('/'));
    await proxied.locator('body[data-loaded="error"]').waitFor({ state: 'attached', timeout: 15_000 });
    const shown = (await proxied.getByTestId('error-message').textContent()) ?? '';
    expect(shown).toContain('the console refuses requests through `gcloud run services proxy`');
    expect(shown).toContain('inbox console --service inboxconsole --region REGION');
    expect(shown).toContain('HTTP 403');
    await proxied.screenshot({ path: join(SHOTS, 'refused-cloud-run-proxy.png') });
  } finally {
    await proxied.close();
  }
});
