import { listIncidents } from '../operations/incidents';
import { cell, type CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { print } from './output';

/**
 * `inbox incidents [--all]`: the open incidents of instances in INCIDENT and
 * their FAILED jobs (operations/incidents.ts). Its JSON names the instance
 * `instance`, as it did before the console shared the list.
 */
export async function incidentsCommand(ctx: CliContext, options: { all?: boolean } = {}): Promise<void> {
  const list = await listIncidents(operationsDeps(ctx), { all: options.all === true });
  const shown = list.incidents.map(({ instanceId, ...rest }) => ({ ...rest, instance: instanceId }));
  print(
    ctx,
    { incidents: shown, failedJobs: list.failedJobs },
    ['instance', 'business key', 'reason', 'execution', 'activity', 'message', 'resolved'],
    [
      ...list.incidents.map((x) => [
        x.instanceId,
        x.businessKey,
        x.reason,
        x.executionId,
        x.activityId,
        x.message,
        x.resolvedAt === null ? '' : `${x.resolvedAt} ${cell(x.resolution)}`.trim(),
      ]),
      ...list.failedJobs.map((j) => [
        j.processInstanceId,
        '',
        'FAILED JOB',
        j.executionId,
        j.activityId,
        `job ${j.id}: ${String(j.lastError)}`,
        '',
      ]),
    ],
  );
}
