/**
 * `inbox model impact [--force] [--json]`: the app INBOX_APP names, as a
 * deploy would run it, against the project's live state, read only. For
 * each of the app's processes: its diff from the newest version stored in
 * processVersions, with the tokens, pending jobs, scheduled timers and open
 * user tasks at each removed or changed element (of instances of any other
 * version); for the processes of the project the app no longer has, how
 * many instances run on. Then the step handlers the app drops that pending
 * jobs of RUNNING or INCIDENT instances still need (any version), and those
 * that instances of older versions can still reach from where their tokens
 * stand (operations/older-version-needs.ts): a deploy is refused (exit 1)
 * naming each with its count, unless `--force`, which prints what may
 * become an incident instead. infra/deploy.sh runs it
 * before it changes anything (its dry run too).
 */
import { checkApp } from '../apps/check-app';
import type { ProcessModel } from '../bpmn/model';
import { diffModels } from '../bpmn/model-diff';
import { loadAppSettings } from '../config';
import { publishSteps } from '../jobs/publish-steps';
import { type DroppedHandler, droppedHandlers, droppedWords } from '../operations/dropped-handlers';
import { type PendingJob, type ProcessLoad, readProcessLoad } from '../operations/model-impact';
import { newestVersions, storedModel } from '../operations/stored-versions';
import { olderVersionNeeds, type UnwalkedVersion } from '../operations/older-version-needs';
import { type UnreachedHandler, unreachedWords } from '../operations/unreached-handlers';
import { storedVersions } from '../operations/versions';
import type { CliContext, CliIo } from './context';
import { CliFailure, EXIT } from './failures';
import { itemActivitiesOf } from './model-diff-command';
import { type DiffImpact, diffLines, impactOf } from './model-diff-lines';

/** One process as the impact sees it. */
interface ProcessImpact {
  readonly processKey: string;
  /** changed: a diff from the newest stored version; unchanged: that version is the app's; new: none stored; gone: stored, not in the app. */
  readonly status: 'changed' | 'unchanged' | 'new' | 'gone';
  readonly fromVersion: string | null;
  readonly toVersion: string | null;
  readonly diff?: ReturnType<typeof diffModels>;
  readonly impact?: DiffImpact;
  /** RUNNING and INCIDENT instances read (its items included). */
  readonly instancesRead: number;
  readonly capped: boolean;
  /** Why no diff could be made (a stored version that no longer loads). */
  readonly note?: string;
}

/** What is read of each process: its load, and the models its items may come from. */
async function loadOf(
  ctx: CliContext,
  key: string,
  models: readonly ProcessModel[],
  skip: string | null,
): Promise<ProcessLoad> {
  return readProcessLoad(ctx.db(), key, itemActivitiesOf(...models), skip);
}

export async function modelImpactCommand(
  io: Pick<CliIo, 'out'>,
  env: NodeJS.ProcessEnv,
  ctx: CliContext,
  json: boolean,
  force: boolean,
): Promise<void> {
  const { app, steps, engine } = await checkApp(loadAppSettings(env));
  const models = engine.processKeys.map((k) => engine.model(k));
  const handlers = new Set([...steps, ...Object.keys(publishSteps(models, app))]);
  // runJob takes a job's publishing step from its instance's own version: an element only an older version draws
  // still publishes while the app sends its message.
  const handlersOf = (model: ProcessModel): ReadonlySet<string> =>
    new Set([...handlers, ...Object.keys(publishSteps([model], app))]);
  const versionPublishes = new Set<string>();
  const newest = newestVersions(await storedVersions(ctx.db(), null));
  const processes: ProcessImpact[] = [];
  const jobs: PendingJob[] = [];
  const unreached: UnreachedHandler[] = [];
  const unwalked: UnwalkedVersion[] = [];
  const walk = async (key: string, load: ProcessLoad, atHand: readonly ProcessModel[]): Promise<void> => {
    const needs = await olderVersionNeeds(ctx.db(), key, load.positions, atHand, handlersOf);
    for (const model of needs.walked) for (const k of Object.keys(publishSteps([model], app))) versionPublishes.add(k);
    unreached.push(...needs.unreached);
    unwalked.push(...needs.unwalked);
  };
  for (const model of models) {
    const stored = newest.get(model.key);
    const old =
      stored === undefined || stored.version === model.version
        ? null
        : await storedModel(ctx.db(), model.key, stored.version);
    const oldModel = old !== null && 'model' in old ? old.model : null;
    const load = await loadOf(ctx, model.key, oldModel === null ? [model] : [oldModel, model], model.version);
    jobs.push(...load.pendingJobs);
    await walk(model.key, load, oldModel === null ? [model] : [oldModel, model]);
    const base = {
      processKey: model.key,
      toVersion: model.version,
      instancesRead: load.instancesRead,
      capped: load.capped,
    };
    if (stored === undefined) processes.push({ ...base, status: 'new', fromVersion: null });
    else if (oldModel === null)
      processes.push({
        ...base,
        status: stored.version === model.version ? 'unchanged' : 'changed',
        fromVersion: stored.version,
        ...(old !== null && 'missing' in old ? { note: old.missing } : {}),
      });
    else {
      const diff = diffModels(oldModel, model);
      processes.push({ ...base, status: 'changed', fromVersion: stored.version, diff, impact: impactOf(diff, load) });
    }
  }
  for (const [key, stored] of newest) {
    if (engine.deployed(key) !== null) continue;
    const found = await storedModel(ctx.db(), key, stored.version);
    const load = await loadOf(ctx, key, 'model' in found ? [found.model] : [], null);
    jobs.push(...load.pendingJobs);
    await walk(key, load, 'model' in found ? [found.model] : []);
    processes.push({
      processKey: key,
      status: 'gone',
      fromVersion: stored.version,
      toVersion: null,
      instancesRead: load.instancesRead,
      capped: load.capped,
    });
  }
  const dropped = droppedHandlers(jobs, new Set([...handlers, ...versionPublishes]));
  const needed = dropped.length > 0 || unreached.length > 0;
  const refused = needed && !force;
  const capped = processes.some((p) => p.capped);
  if (json)
    io.out(
      JSON.stringify(
        {
          app: app.name,
          project: ctx.config.projectId,
          processes,
          droppedHandlers: dropped,
          unreachedHandlers: unreached,
          unwalkedVersions: unwalked,
          capped,
          refused,
          forced: force && needed,
        },
        null,
        2,
      ),
    );
  else
    for (const line of impactLines(app.name, ctx.config.projectId, processes, { dropped, unreached, unwalked }, force))
      io.out(line);
  if (capped && !json) io.out('CAPPED: more than the bound was left unread; the counts are lower bounds');
  if (refused) throw new CliFailure(EXIT.FAILED, refusal(dropped, unreached));
}

/** Why the deploy is refused, and what to do. */
function refusal(dropped: readonly DroppedHandler[], unreached: readonly UnreachedHandler[]): string {
  const parts: string[] = [];
  if (dropped.length > 0)
    parts.push(
      `the app drops step handlers that pending jobs still need: ${dropped.map(droppedWords).join('; ')}: keep each handler in the app's steps until its jobs are done (run \`inbox model impact\` again to see)`,
    );
  if (unreached.length > 0)
    parts.push(
      `the app drops step handlers that instances of older versions can still reach: ${unreached.map(unreachedWords).join('; ')}: keep each handler in the app's steps and name it in defineApp's keepForOlderVersions (remove it once \`inbox versions\` shows no running instance of a version that draws it), or move those instances first (\`inbox migrate\`)`,
    );
  return `refused: ${parts.join('; and ')}; or deploy with --force (each such job then fails on its first run: the job FAILED, its instance in INCIDENT, JOB_FAILED: no async handler registered)`;
}

function impactLines(
  appName: string,
  project: string,
  processes: readonly ProcessImpact[],
  handlers: {
    readonly dropped: readonly DroppedHandler[];
    readonly unreached: readonly UnreachedHandler[];
    readonly unwalked: readonly UnwalkedVersion[];
  },
  force: boolean,
): string[] {
  const { dropped, unreached, unwalked } = handlers;
  const lines = [`impact of app ${appName} on project ${project} (against the newest stored version of each process):`];
  for (const p of processes) {
    const running = `${p.instancesRead} RUNNING or INCIDENT instances${p.capped ? ' (capped)' : ''}`;
    if (p.status === 'changed' && p.diff !== undefined && p.impact !== undefined)
      lines.push(
        ...diffLines(
          p.diff,
          `version ${p.fromVersion ?? '?'} (deployed)`,
          `version ${p.toVersion ?? '?'} (the app's)`,
          p.impact,
        ),
      );
    else if (p.status === 'changed')
      lines.push(`${p.processKey}: changed, not compared: ${p.note ?? 'no stored model'}`);
    else if (p.status === 'unchanged')
      lines.push(`${p.processKey}: unchanged (version ${p.fromVersion ?? '?'}); ${running}`);
    else if (p.status === 'new')
      lines.push(
        `${p.processKey}: no version stored yet (a first deploy, or one from before versions were kept); ${running}`,
      );
    else lines.push(`${p.processKey}: no longer in the app; ${running} keep running on their stored versions`);
  }
  if (dropped.length === 0) lines.push('handlers: every pending job has its handler in the app');
  else if (force)
    for (const d of dropped)
      lines.push(
        `--force: will become incidents (JOB_FAILED, no async handler registered) when they run: handler ${droppedWords(d)}`,
      );
  else for (const d of dropped) lines.push(`DROPPED handler ${droppedWords(d)}`);
  if (unreached.length === 0)
    lines.push('handlers: no instance of an older version can reach a task the app has no handler for');
  else if (force)
    for (const u of unreached)
      lines.push(
        `--force: may become incidents (JOB_FAILED, no async handler registered): handler ${unreachedWords(u)}`,
      );
  else for (const u of unreached) lines.push(`DROPPED handler ${unreachedWords(u)}`);
  for (const u of unwalked)
    lines.push(
      `NOT WALKED: ${u.instances} ${u.instances === 1 ? 'instance' : 'instances'} of ${u.processKey} version ${u.processVersion.slice(0, 8)}: ${u.why}; the tasks they can still reach were not checked`,
    );
  return lines;
}
