/**
 * Migrating instances to another version (`inbox migrate` in the console):
 * the live instances of a process version, or one of them, the target
 * version to choose among the stored ones, both diagrams side by side, and
 * the mapping of the elements their tokens sit at. "Preview" asks
 * POST /api/migrations for the real transactions rolled back and shows
 * each instance's moves or refusal; "Migrate N instances" sends the same
 * request with the preview's `expect` (as the CLI's --expect), so an
 * instance that changed since is refused, and shows the result per
 * instance. Repairers only: a viewer sees the view without its buttons.
 */
import type {
  ElementOverlay,
  MigrationOutcomeView,
  ProcessVersionsView,
  VersionModelView,
} from '../../functions/src/operations/types';
import { api, ApiError, describe, type MigrationRequest } from './api';
import { mayRepair, type ViewContext } from './context';
import { renderDiagram } from './diagram';
import { button, h } from './dom';
import { mappingTable, type MappingTable } from './migrate-mapping';
import { countOf, outcomeTable } from './migrate-outcome';
import { link } from './router';
import { shortVersion } from './version';

const ENDED = new Set(['ENDED', 'CANCELLED']);

/** Draws `model` into `box` in its slot, or says in words why it could not. */
async function draw(box: HTMLElement, model: VersionModelView, overlays: ElementOverlay[], slot: string) {
  try {
    await renderDiagram(box, model.xml, overlays, slot);
    box.dataset.drawn = model.version;
  } catch (err) {
    box.replaceChildren(
      h(
        'p',
        { class: 'error', testid: `diagram-${slot}-error` },
        `Version ${shortVersion(model.version)} could not be drawn: ${describe(err)}`,
      ),
    );
  }
}

/** Where the live tokens are: of the one instance, or of the version's live instances (`inbox versions`'s read). */
async function waitingOf(
  versions: ProcessVersionsView,
  from: string,
  instance: string | null,
): Promise<{ waiting: Record<string, number>; what: string }> {
  if (instance !== null) {
    const v = await api.instance(instance);
    const waiting: Record<string, number> = {};
    for (const t of v.tokens) if (!ENDED.has(t.status)) waiting[t.activityId] = (waiting[t.activityId] ?? 0) + 1;
    return { waiting, what: `instance ${instance}` };
  }
  const row = versions.versions.find((v) => v.version === from);
  const capped = versions.capped ? ' (of the instances read: the read stopped at its limit)' : '';
  return { waiting: { ...(row?.waiting ?? {}) }, what: `its ${row?.live ?? 0} live instances${capped}` };
}

const cliLine = (r: MigrationRequest): string =>
  [
    `inbox migrate --process ${r.processKey} --from ${r.from} --to ${r.to}`,
    ...Object.entries(r.mapping).map(([a, b]) => `--map ${a}=${b}`),
    r.instances === 'all' ? '--all' : `--instances ${r.instances.join(',')}`,
    '--dry-run',
  ].join(' ');

export async function renderMigrate(main: HTMLElement, params: URLSearchParams, context: Promise<ViewContext>) {
  const processKey = params.get('process') ?? '';
  const fromText = params.get('from') ?? '';
  const instance = params.get('instance');
  if (processKey === '' || fromText === '')
    throw new Error(
      "The migration view takes a process and the version to migrate from: open it from a version's instance list.",
    );
  const [ctx, versions, source] = await Promise.all([
    context,
    api.versions(processKey),
    api.version(processKey, fromText),
  ]);
  const { waiting, what } = await waitingOf(versions, source.version, instance);
  const targets = versions.versions.filter((v) => v.stored && v.version !== source.version);
  const repair = mayRepair(ctx);

  const view = h('div', { class: 'migrate', testid: 'migrate-view' });
  const select = h(
    'select',
    { testid: 'migrate-target' },
    ...targets.map((v) =>
      h(
        'option',
        { value: v.version, selected: v.deployed },
        `${shortVersion(v.version)}${v.deployed ? ' (deployed)' : ''}${v.firstDeployedAt === null ? '' : `, first run ${v.firstDeployedAt}`}`,
      ),
    ),
  );
  const sourceBox = h('div', { class: 'diagram', testid: 'diagram-source' });
  const targetBox = h('div', { class: 'diagram', testid: 'diagram-target' });
  const targetHeading = h('h2', {}, 'Target');
  const mappingBox = h('div', { testid: 'mapping-box' });
  const cli = h('pre', { class: 'cli', testid: 'migrate-cli' });
  const status = h('div', { class: 'status', testid: 'migrate-status', 'aria-live': 'polite' });
  const result = h('div', { testid: 'migrate-outcome' });
  const previewButton = button('Preview', 'migrate-preview', () => void preview(), { disabled: true });
  const confirmButton = button('Migrate', 'migrate-confirm', () => void confirm(), { disabled: true });
  let target: VersionModelView | null = null;
  let mapping: MappingTable | null = null;
  let pending: { request: MigrationRequest; requestId: string; expect: string } | null = null;

  const request = (): MigrationRequest | null =>
    target === null || mapping === null
      ? null
      : {
          processKey,
          from: source.version,
          to: target.version,
          mapping: mapping.mapping(),
          instances: instance === null ? 'all' : [instance],
        };
  /** Any change of target or mapping: the preview shown no longer holds. */
  const changed = (): void => {
    pending = null;
    confirmButton.disabled = true;
    confirmButton.textContent = 'Migrate';
    result.replaceChildren();
    const r = request();
    cli.textContent = r === null ? '' : cliLine(r);
  };
  const failure = (err: unknown): HTMLElement =>
    err instanceof ApiError && (err.refused || err.status === 409)
      ? h('p', { class: 'refused', testid: 'migrate-refused' }, 'Refused, nothing changed: ', err.message)
      : h('p', { class: 'error', testid: 'migrate-error' }, describe(err));

  async function chooseTarget(version: string): Promise<void> {
    delete view.dataset.target;
    previewButton.disabled = true;
    target = await api.version(processKey, version);
    mapping = mappingTable(source.elements, target.elements, waiting, changed);
    mappingBox.replaceChildren(mapping.element);
    changed();
    targetHeading.textContent = `Target ${shortVersion(target.version)}`;
    await draw(targetBox, target, [], 'target');
    previewButton.disabled = false;
    view.dataset.target = target.version;
  }

  async function preview(): Promise<void> {
    const r = request();
    if (r === null) return;
    const requestId = crypto.randomUUID();
    status.textContent = 'Asking for a preview…';
    previewButton.disabled = true;
    try {
      const outcome: MigrationOutcomeView = await api.migrate(r, true, requestId);
      const n = countOf(outcome, 'WOULD_MIGRATE');
      pending = outcome.expect === null || n === 0 ? null : { request: r, requestId, expect: outcome.expect };
      result.replaceChildren(
        h('p', { class: 'note' }, `Preview: this is what "Migrate" will do, held to what it read (--expect).`),
        outcomeTable(outcome, 'migration-preview'),
      );
      confirmButton.textContent = `Migrate ${n} instance${n === 1 ? '' : 's'}`;
      confirmButton.disabled = pending === null;
    } catch (err) {
      result.replaceChildren(failure(err));
    }
    status.textContent = '';
    previewButton.disabled = false;
  }

  async function confirm(): Promise<void> {
    if (pending === null || target === null) return;
    const { request: r, requestId, expect } = pending;
    status.textContent = 'Migrating…';
    previewButton.disabled = true;
    confirmButton.disabled = true;
    select.disabled = true;
    try {
      const outcome = await api.migrate(r, false, requestId, expect);
      result.replaceChildren(
        h('p', { class: 'note' }, `Done, request ${outcome.requestId}.`),
        outcomeTable(outcome, 'migration-result'),
        h(
          'a',
          { href: link.versionInstances({ process: processKey, version: r.to }), testid: 'migrate-target-instances' },
          `The instances of version ${shortVersion(r.to)}`,
        ),
      );
      pending = null;
    } catch (err) {
      result.replaceChildren(failure(err));
      previewButton.disabled = false;
      select.disabled = false;
    }
    status.textContent = '';
  }

  select.addEventListener(
    'change',
    () => void chooseTarget(select.value).catch((err: unknown) => result.replaceChildren(failure(err))),
  );
  view.append(
    h(
      'h1',
      {},
      instance === null ? 'Migrate instances of ' : `Migrate instance ${instance} of `,
      h('code', {}, processKey),
      ' at version ',
      h('code', { title: source.version, testid: 'migrate-from' }, shortVersion(source.version)),
    ),
    h('p', { testid: 'migrate-what' }, `Moves ${what} to the version chosen, each in its own transaction.`),
    targets.length === 0
      ? h('p', { class: 'empty', testid: 'migrate-no-target' }, `No other version of ${processKey} is stored.`)
      : h('label', {}, 'Target version ', select),
    h(
      'div',
      { class: 'diagrams' },
      h('div', {}, h('h2', {}, `Source ${shortVersion(source.version)}`), sourceBox),
      h('div', {}, targetHeading, targetBox),
    ),
    h('h2', {}, 'Where each token goes'),
    mappingBox,
    h('p', { class: 'note' }, 'The same, on the command line:'),
    cli,
    repair
      ? h('div', { class: 'buttons' }, previewButton, confirmButton)
      : h(
          'p',
          { class: 'note', testid: 'migrate-viewer' },
          'You may look, not migrate (migrating needs the repairer role).',
        ),
    status,
    result,
  );
  main.replaceChildren(view);
  // After the DOM is in place: bpmn-js measures its container to fit the diagram.
  const overlays = Object.entries(waiting).map(([activityId, tokens]) => ({
    activityId,
    tokens,
    waiting: 0,
    timers: 0,
    incidents: 0,
  }));
  await draw(sourceBox, source, overlays, 'source');
  if (targets.length > 0) await chooseTarget(select.value);
}
