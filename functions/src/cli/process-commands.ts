import type { Repaired } from '../engine/store/token-repair';
import { listIncidents } from '../operations/incidents';
import { cancelTokenRepair, moveTokenRepair, resolveIncidentRepair, type RepairRunOptions } from '../operations/repairs';
import type { RepairOutcome } from '../operations/types';
import { QUERIES } from '../queries';
import { cell, type CliContext } from './context';
import { reportUndispatched } from './dispatch-after-repair';
import { type Doc, view } from '../operations/documents';
import { RefusedError } from '../operations/refused';
import { cliActor, operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { readStoredInstance } from '../operations/stored-instance';
import { expectOption, printPreview } from './repair-preview';

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

/**
 * `inbox incidents [--all]`: the open incidents of instances in INCIDENT and
 * their FAILED jobs (operations/incidents.ts). Its JSON names the instance
 * `instance`, as it did before the console shared the list.
 */
export async function incidents(ctx: CliContext, options: { all?: boolean } = {}): Promise<void> {
  const list = await listIncidents(operationsDeps(ctx), { all: options.all === true });
  const shown = list.incidents.map(({ instanceId, ...rest }) => ({ ...rest, instance: instanceId }));
  print(ctx, { incidents: shown, failedJobs: list.failedJobs }, ['instance', 'business key', 'reason', 'execution', 'activity', 'message', 'resolved'], [
    ...list.incidents.map((x) => [x.instanceId, x.businessKey, x.reason, x.executionId, x.activityId, x.message, x.resolvedAt === null ? '' : `${x.resolvedAt} ${cell(x.resolution)}`.trim()]),
    ...list.failedJobs.map((j) => [j.processInstanceId, '', 'FAILED JOB', j.executionId, j.activityId, `job ${j.id}: ${String(j.lastError)}`, '']),
  ]);
}

/** How a CLI repair runs: as the operator (cliActor), for real or with --dry-run as a preview; held to --expect when given. */
const runOptions = (ctx: CliContext, options: { dryRun?: boolean; expect?: string }): RepairRunOptions => ({ preview: options.dryRun === true, actor: cliActor(ctx.config), ...expectOption(options.expect) });

/** Closes an instance's open incidents once their cause is repaired (refused, naming the causes, before). */
export async function resolveIncidentCommand(ctx: CliContext, instanceId: string, options: { note?: string; dryRun?: boolean; expect?: string }): Promise<void> {
  const { outcome, result: done } = await resolveIncidentRepair(operationsDeps(ctx), { kind: 'resolve-incident', instanceId, note: options.note ?? null }, runOptions(ctx, options));
  if (outcome.preview) return printPreview(ctx, outcome);
  print(ctx, done, ['instance', 'status', 'incidents resolved'], [[done.instance.id, done.instance.status, done.resolved]]);
  if (done.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}

/** After a repair (operations dispatched what it created): report, with what the sweep will take care of. */
function report(ctx: CliContext, what: string, changed: Repaired, outcome: RepairOutcome): void {
  const done = { dispatched: outcome.dispatched, timersDispatched: outcome.timersDispatched };
  print(ctx, { ...changed, ...done }, ['repair', 'new jobs', 'dispatched', 'new timers', 'timers dispatched', 'consumed messages'], [
    [what, changed.jobs.length, done.dispatched, changed.timers.length, done.timersDispatched, changed.consumed.length],
  ]);
  reportUndispatched(ctx, changed, done);
  if (changed.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}

export async function moveTokenCommand(ctx: CliContext, options: { instance: string; activity: string; execution?: string; force?: boolean; dryRun?: boolean; expect?: string }): Promise<void> {
  const request = { kind: 'move-token', instanceId: options.instance, activityId: options.activity, executionId: options.execution ?? null, force: options.force === true } as const;
  const { outcome, result } = await moveTokenRepair(operationsDeps(ctx), request, runOptions(ctx, options));
  if (outcome.preview) return printPreview(ctx, outcome);
  // Where the token came from is for the summary; the CLI's output stays as it was.
  const changed: Repaired & { executionId: string; fromActivityId?: string | null } = { ...result };
  delete changed.fromActivityId;
  report(ctx, `token ${changed.executionId} to ${options.activity}`, changed, outcome);
}

export async function cancelTokenCommand(ctx: CliContext, options: { instance: string; execution: string; dryRun?: boolean; expect?: string }): Promise<void> {
  const { outcome, result } = await cancelTokenRepair(operationsDeps(ctx), { kind: 'cancel-token', instanceId: options.instance, executionId: options.execution }, runOptions(ctx, options));
  if (outcome.preview) return printPreview(ctx, outcome);
  const changed: Repaired & { activityId?: string } = { ...result };
  delete changed.activityId;
  report(ctx, `token ${options.execution} cancelled`, changed, outcome);
}
