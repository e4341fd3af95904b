import { refs } from '../engine/store/collections';
import { instanceJobs } from '../engine/store/instance-doc';
import { cancelTokenRun } from '../engine/store/cancel-token';
import { moveToken } from '../engine/store/move-token';
import { newRequestId } from '../engine/store/repair-request';
import { resolveIncident } from '../engine/store/resolve-incident';
import type { Repaired } from '../engine/store/token-repair';
import { logDuplicates } from '../jobs/dispatch';
import { createLogger } from '../log';
import { QUERIES } from '../queries';
import { cell, type CliContext } from './context';
import { dispatchAfterRepair, reportUndispatched } from './dispatch-after-repair';
import { type Doc, view } from './documents';
import { RefusedError } from './inbox-ops';
import { ALREADY_APPLIED, print } from './output';
import { readStoredInstance } from '../operations/stored-instance';

export async function instances(ctx: CliContext, businessKey: string): Promise<void> {
  const db = ctx.db();
  const found = (await QUERIES.instancesByBusinessKey.build(db, businessKey).get()).docs.map(view);
  if (found.length === 0) throw new RefusedError(`no process instance with business key ${businessKey}`);
  // Tokens from the instance document (or, stored before tokens moved in, from its token documents: stored-instance.ts).
  const withTokens = await Promise.all(
    found.map(async (i): Promise<Doc & { executions: Doc[] }> => {
      const stored = await readStoredInstance(db, i.id);
      // The tokens once, as `executions` (the shape of this output before they moved into the instance document), and the jobs as a list.
      const rest = Object.fromEntries(Object.entries(i).filter(([k]) => k !== 'tokens' && k !== 'jobs'));
      return { ...rest, id: i.id, executions: (stored?.tokens ?? []).map((e) => ({ ...e })), jobs: (stored?.jobs ?? []).map((j) => ({ ...j })) };
    }),
  );
  print(ctx, withTokens, ['instance', 'process', 'status', 'token', 'at', 'token status', 'waiting for', 'incidents'], withTokens.flatMap((i) =>
    i.executions.map((e) => [i.id, i.processKey, i.status, e.id, e.activityId, e.status, e.waitingFor, (i.incidents as unknown[] | undefined)?.length ?? 0]),
  ));
}

const isOpen = (incident: Record<string, unknown>): boolean => incident.resolvedAt === undefined || incident.resolvedAt === null;

/**
 * The open incidents of instances in INCIDENT and the FAILED jobs of those
 * instances. A FAILED job of an instance whose incidents are resolved is
 * history (its token was moved on or cancelled): shown with --all only, as
 * are resolved incidents.
 */
export async function incidents(ctx: CliContext, options: { all?: boolean } = {}): Promise<void> {
  const db = ctx.db();
  const all = options.all === true;
  const [open, resolved, withFailed, legacySnap] = await Promise.all([
    QUERIES.instancesByStatus.build(db, 'INCIDENT').get(),
    all ? QUERIES.instancesWithResolvedIncidents.build(db).get() : null,
    QUERIES.instancesWithFailedJobs.build(db).get(),
    // FAILED job documents of instances stored before jobs moved into the instance document.
    QUERIES.jobsByStatus.build(db, 'FAILED').get(),
  ]);
  const failedInInstances = withFailed.docs.flatMap((d) => instanceJobs(view(d)).filter((j) => j.status === 'FAILED').map((j): Doc => ({ ...j })));
  const byId = new Map<string, Doc>();
  for (const snap of [...open.docs, ...(resolved?.docs ?? [])]) byId.set(snap.id, view(snap));
  const list = [...byId.values()].flatMap((i) =>
    ((i.incidents as Array<Record<string, unknown>> | undefined) ?? [])
      .filter((x) => all || isOpen(x))
      .map((x): Record<string, unknown> => ({ ...x, instance: i.id, businessKey: i.businessKey, instanceStatus: i.status })),
  );
  const inIncident = new Set(open.docs.map((d) => d.id));
  const failedJobs = [...failedInInstances, ...legacySnap.docs.map(view)].filter((j) => all || inIncident.has(String(j.processInstanceId)));
  print(ctx, { incidents: list, failedJobs }, ['instance', 'business key', 'reason', 'execution', 'activity', 'message', 'resolved'], [
    ...list.map((x) => [x.instance, x.businessKey, x.reason, x.executionId, x.activityId, x.message, isOpen(x) ? '' : `${cell(x.resolvedAt)} ${cell(x.resolution)}`.trim()]),
    ...failedJobs.map((j) => [j.processInstanceId, '', 'FAILED JOB', j.executionId, j.activityId, `job ${j.id}: ${String(j.lastError)}`, '']),
  ]);
}

/** Closes an instance's open incidents once their cause is repaired (refused, naming the causes, before). */
export async function resolveIncidentCommand(ctx: CliContext, instanceId: string, options: { note?: string }): Promise<void> {
  const done = await resolveIncident(ctx.db(), instanceId, options.note ?? null, ctx.now(), newRequestId());
  print(ctx, done, ['instance', 'status', 'incidents resolved'], [[done.instance.id, done.instance.status, done.resolved]]);
  if (done.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}

/** After a repair: dispatch what it created (dispatch-after-repair.ts) and report. */
async function report(ctx: CliContext, what: string, changed: Repaired): Promise<void> {
  const log = createLogger((line) => ctx.io.err(line), { function: 'inbox-cli' });
  logDuplicates(log, changed.duplicates);
  const done = await dispatchAfterRepair(ctx, changed, log);
  print(ctx, { ...changed, ...done }, ['repair', 'new jobs', 'dispatched', 'new timers', 'timers dispatched', 'consumed messages'], [
    [what, changed.jobs.length, done.dispatched, changed.timers.length, done.timersDispatched, changed.consumed.length],
  ]);
  reportUndispatched(ctx, changed, done);
  if (changed.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}

export async function moveTokenCommand(ctx: CliContext, options: { instance: string; activity: string; execution?: string; force?: boolean }): Promise<void> {
  const engine = await ctx.runtime.engine();
  const instance = await refs.instance(ctx.db(), options.instance).get();
  if (!instance.exists) throw new RefusedError(`no process instance ${options.instance}`);
  const changed = await moveToken(ctx.db(), engine, { processInstanceId: options.instance, executionId: options.execution ?? null, activityId: options.activity, force: options.force === true, now: ctx.now(), requestId: newRequestId() });
  await report(ctx, `token ${changed.executionId} to ${options.activity}`, changed);
}

export async function cancelTokenCommand(ctx: CliContext, options: { instance: string; execution: string }): Promise<void> {
  const engine = await ctx.runtime.engine();
  const changed = await cancelTokenRun(ctx.db(), engine, options.instance, options.execution, ctx.now(), newRequestId());
  await report(ctx, `token ${options.execution} cancelled`, changed);
}
