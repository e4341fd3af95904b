/**
 * One process instance: its model drawn with what it has on each element,
 * then its tokens and incidents with their repairs, and below them the
 * read-only tables of instance-tables.ts (timers, jobs, the audit trail of
 * the messages it correlated, the parked documents of its keys, the repairs
 * done to it).
 */
import type { InstanceView, TokenView } from '../../functions/src/operations/types';
import { api, describe } from './api';
import { mayRepair, type ViewContext } from './context';
import { renderDiagram, type ModelElement } from './diagram';
import { button, h, row, section, table, time } from './dom';
import { otherSections } from './instance-tables';
import { tokenTasksOf, waitingCell, type TokenTasks } from './instance-user-tasks';
import { openRepairDialog } from './repair-dialog';
import { callCell, calledByFacts } from './instance-calls';
import { link } from './router';
import { migrateLink, shortVersion, versionLink } from './version';

const ENDED = new Set(['ENDED', 'CANCELLED']);

const isLive = (t: TokenView): boolean => !ENDED.has(t.status);

function moveTokenDialog(v: InstanceView, elements: readonly ModelElement[], ctx: ViewContext): void {
  const live = v.tokens.filter(isLive);
  openRepairDialog({
    title: `Move a token of ${v.row.id}`,
    fields: [
      // Without a drawn model there is no list to choose from: the operator types the activity id.
      elements.length === 0
        ? { name: 'activityId', label: 'To (activity id)', kind: 'text' }
        : {
            name: 'activityId',
            label: 'To',
            kind: 'select',
            options: [
              { value: '', label: '(choose an element)' },
              ...elements.map((e) => ({ value: e.id, label: `${e.name ?? e.id} (${e.type}, ${e.id})` })),
            ],
          },
      {
        name: 'executionId',
        label: 'Token',
        kind: 'select',
        options: [
          { value: '', label: '(the only live token)' },
          ...live.map((t) => ({ value: t.id, label: `${t.id} at ${t.activityId} (${t.status})` })),
        ],
      },
      { name: 'force', label: 'Force (move even where the engine would refuse)', kind: 'checkbox' },
    ],
    build: (values) => {
      const activityId = values.get('activityId');
      const executionId = values.get('executionId');
      if (typeof activityId !== 'string' || activityId.trim() === '') return 'Choose the element to move the token to.';
      return {
        kind: 'move-token',
        instanceId: v.row.id,
        activityId: activityId.trim(),
        executionId: typeof executionId === 'string' && executionId !== '' ? executionId : null,
        force: values.get('force') === true,
      };
    },
    onDone: ctx.reload,
  });
}

function tokensSection(v: InstanceView, ctx: ViewContext, tasks: TokenTasks): HTMLElement {
  const repair = mayRepair(ctx);
  return section(
    'Tokens',
    'tokens',
    table(
      'token-table',
      ['Token', 'At', 'Status', 'Waiting for', ''],
      v.tokens.map((t) =>
        row(
          'token-row',
          [
            h('code', {}, t.id),
            t.activityId,
            t.status,
            callCell(v, t) ?? waitingCell(v, t, tasks),
            repair && isLive(t)
              ? button('Cancel token', `repair-cancel-token-${t.id}`, () =>
                  openRepairDialog({
                    title: `Cancel token ${t.id}`,
                    fields: [],
                    build: () => ({ kind: 'cancel-token', instanceId: v.row.id, executionId: t.id }),
                    onDone: ctx.reload,
                  }),
                )
              : '',
          ],
          { 'data-id': t.id, 'data-activity-id': t.activityId },
        ),
      ),
      'No tokens.',
    ),
  );
}

function incidentsSection(v: InstanceView, ctx: ViewContext): HTMLElement {
  const open = v.incidents.filter((i) => i.resolvedAt === null);
  return section(
    'Incidents',
    'incidents',
    mayRepair(ctx) && open.length > 0
      ? button('Resolve incident', 'repair-resolve-incident', () =>
          openRepairDialog({
            title: `Resolve the open incident of ${v.row.id}`,
            fields: [{ name: 'note', label: 'Note (optional)', kind: 'text' }],
            build: (values) => {
              const note = values.get('note');
              return {
                kind: 'resolve-incident',
                instanceId: v.row.id,
                note: typeof note === 'string' && note.trim() !== '' ? note.trim() : null,
              };
            },
            onDone: ctx.reload,
          }),
        )
      : null,
    table(
      'incident-table',
      ['Reason', 'At', 'Token', 'Message', 'Created', 'Resolved'],
      v.incidents.map((i) =>
        row(
          'incident-row',
          [
            i.reason,
            i.activityId ?? '—',
            i.executionId ?? '—',
            i.message,
            time(i.createdAt),
            i.resolvedAt === null ? h('strong', { class: 'open' }, 'open') : time(i.resolvedAt),
          ],
          {
            class: i.resolvedAt === null ? 'alert' : undefined,
          },
        ),
      ),
      'No incidents.',
    ),
  );
}

/** Its version beside the deployed one: "version 1a2b3c4d (deployed)", "version 1a2b3c4d (deployed now: 5e6f7a8b)". */
function versionFacts(v: InstanceView): readonly (Node | string)[] {
  const { id, deployed } = v.version;
  const which =
    id === null
      ? ''
      : deployed === null
        ? ' (no version of it is deployed now)'
        : id === deployed
          ? ' (deployed)'
          : ` (deployed now: ${shortVersion(deployed)})`;
  return [
    ', version ',
    versionLink(v.row.processKey, id, 'instance-version'),
    h('span', { testid: 'instance-version-deployed' }, which),
  ];
}

/** Said under the diagram when it is not the instance's own version: that version is not stored, so it runs on the deployed one. */
function fallbackNote(v: InstanceView): HTMLElement | null {
  if (v.version.drawn !== 'deployed' || v.model === null) return null;
  const own = v.version.id === null ? 'no version' : `version ${shortVersion(v.version.id)}, which is not stored`;
  return h(
    'p',
    { class: 'note', testid: 'diagram-fallback' },
    `This instance records ${own} (it started before versions were kept): it runs on the deployed model, version ${shortVersion(v.model.version)}, drawn here.`,
  );
}

/** Draws the instance once both it and who is looking are known (both asked at once), and its tokens' user tasks. */
export async function renderInstance(main: HTMLElement, id: string, context: Promise<ViewContext>): Promise<void> {
  const [v, ctx] = await Promise.all([api.instance(id), context]);
  const tasks = await tokenTasksOf(v);
  const r = v.row;
  const diagramBox = h('div', { class: 'diagram', testid: 'diagram' });
  const diagramNote = h('div', { testid: 'diagram-note' });
  const fallback = fallbackNote(v);
  const actions = h('div', { class: 'actions', testid: 'instance-actions' });
  main.replaceChildren(
    h('h1', {}, 'Instance ', h('code', { testid: 'instance-id' }, r.id)),
    h(
      'p',
      { testid: 'instance-facts' },
      r.processKey,
      ...versionFacts(v),
      ', business key ',
      h('a', { href: link.instances(r.businessKey) }, r.businessKey),
      ...calledByFacts(v),
      `, ${r.status}, created `,
      time(r.createdAt),
      `, ${r.activeTokens} live tokens, ${r.openIncidents} open incidents`,
    ),
    actions,
    diagramBox,
    ...(fallback === null ? [] : [fallback]),
    diagramNote,
    tokensSection(v, ctx, tasks),
    incidentsSection(v, ctx),
    ...otherSections(v),
  );
  let elements: readonly ModelElement[] = [];
  if (v.model === null) {
    diagramBox.replaceChildren(
      h(
        'p',
        { class: 'empty', testid: 'diagram-missing' },
        `The model ${r.processKey} is no longer deployed${v.version.id === null ? '' : ` and its version ${shortVersion(v.version.id)} is not stored`}: no diagram.`,
      ),
    );
  } else {
    try {
      // After the DOM is in place: bpmn-js measures its container to fit the diagram.
      const drawn = await renderDiagram(diagramBox, v.model.xml, v.overlays);
      elements = drawn.elements;
      if (drawn.unplaced.length > 0) {
        diagramNote.replaceChildren(
          h(
            'p',
            { class: 'error', testid: 'diagram-unplaced' },
            `Not in the diagram: ${drawn.unplaced.map((o) => `${o.activityId} (${o.tokens} tokens, ${o.incidents} incidents)`).join(', ')}`,
          ),
        );
      }
    } catch (err) {
      diagramBox.replaceChildren(
        h('p', { class: 'error', testid: 'diagram-error' }, `The model could not be drawn: ${describe(err)}`),
      );
    }
  }
  if (mayRepair(ctx) && v.tokens.some(isLive))
    actions.append(button('Move token…', 'repair-move-token', () => moveTokenDialog(v, elements, ctx)));
  const migrate = migrateLink(v);
  if (mayRepair(ctx) && v.tokens.some(isLive) && migrate !== null) actions.append(migrate);
}
