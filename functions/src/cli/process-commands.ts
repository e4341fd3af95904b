import type { DocumentSnapshot } from '@google-cloud/firestore';
import { refs } from '../engine/store/collections';
import { cancelTokenRun, type Changed, moveToken } from '../engine/store/operations';
import { toDates } from '../engine/store/unit-of-work';
import { dispatchJobs, logDuplicates } from '../jobs/dispatch';
import { createLogger } from '../log';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { RefusedError } from './inbox-ops';
import { print } from './output';

type Doc = Record<string, unknown> & { id: string };
const view = (snap: DocumentSnapshot): Doc => ({ ...(toDates(snap.data() ?? {}) as Record<string, unknown>), id: snap.id });

export async function instances(ctx: CliContext, businessKey: string): Promise<void> {
  const db = ctx.db();
  const found = (await QUERIES.instancesByBusinessKey.build(db, businessKey).get()).docs.map(view);
  if (found.length === 0) throw new RefusedError(`no process instance with business key ${businessKey}`);
  const withTokens = await Promise.all(found.map(async (i): Promise<Doc & { executions: Doc[] }> => ({ ...i, executions: (await QUERIES.executionsOfInstance.build(db, i.id).get()).docs.map(view) })));
  print(ctx, withTokens, ['instance', 'process', 'status', 'token', 'at', 'token status', 'waiting for', 'incidents'], withTokens.flatMap((i) =>
    i.executions.map((e) => [i.id, i.processKey, i.status, e.id, e.activityId, e.status, e.waitingFor, (i.incidents as unknown[] | undefined)?.length ?? 0]),
  ));
}

/** Instances in INCIDENT (duplicate waiting points, failed jobs, …) and FAILED jobs. */
export async function incidents(ctx: CliContext): Promise<void> {
  const db = ctx.db();
  const [instanceSnap, jobSnap] = await Promise.all([QUERIES.instancesByStatus.build(db, 'INCIDENT').get(), QUERIES.jobsByStatus.build(db, 'FAILED').get()]);
  const list = instanceSnap.docs
    .map(view)
    .flatMap((i) => ((i.incidents as Array<Record<string, unknown>> | undefined) ?? []).map((x): Record<string, unknown> => ({ ...x, instance: i.id, businessKey: i.businessKey })));
  const failedJobs = jobSnap.docs.map(view);
  print(ctx, { incidents: list, failedJobs }, ['instance', 'business key', 'reason', 'execution', 'activity', 'message'], [
    ...list.map((x) => [x.instance, x.businessKey, x.reason, x.executionId, x.activityId, x.message]),
    ...failedJobs.map((j) => [j.processInstanceId, '', 'FAILED JOB', j.executionId, j.activityId, `job ${j.id}: ${String(j.lastError)}`]),
  ]);
}

/** After a repair: create the Cloud Tasks of new jobs (if runJob's URL is configured) and report. */
async function report(ctx: CliContext, what: string, changed: Changed): Promise<void> {
  const log = createLogger((line) => ctx.io.err(line), { function: 'inbox-cli' });
  logDuplicates(log, changed.duplicates);
  const url = ctx.config.tasks.runJobUrl;
  const dispatched = url === null ? 0 : await dispatchJobs(ctx.runtime.queue(url), changed.jobs, log);
  const pending = changed.jobs.length - dispatched;
  print(ctx, { ...changed, dispatched }, ['repair', 'new jobs', 'dispatched', 'consumed messages'], [[what, changed.jobs.length, dispatched, changed.consumed.length]]);
  if (pending > 0 && !ctx.json) ctx.io.out(`${pending} job(s) not dispatched here (INBOX_RUN_JOB_URL unset or Cloud Tasks failed): sweepJobs dispatches them within a few minutes`);
}

export async function moveTokenCommand(ctx: CliContext, options: { instance: string; activity: string; execution?: string; force?: boolean }): Promise<void> {
  const engine = await ctx.runtime.engine();
  const instance = await refs.instance(ctx.db(), options.instance).get();
  if (!instance.exists) throw new RefusedError(`no process instance ${options.instance}`);
  const changed = await moveToken(ctx.db(), engine, { processInstanceId: options.instance, executionId: options.execution ?? null, activityId: options.activity, force: options.force === true, now: ctx.now() });
  await report(ctx, `token ${changed.executionId} to ${options.activity}`, changed);
}

export async function cancelTokenCommand(ctx: CliContext, options: { instance: string; execution: string }): Promise<void> {
  const engine = await ctx.runtime.engine();
  const changed = await cancelTokenRun(ctx.db(), engine, options.instance, options.execution, ctx.now());
  await report(ctx, `token ${options.execution} cancelled`, changed);
}
