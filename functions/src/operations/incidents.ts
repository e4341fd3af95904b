/**
 * What waits for an operator in the process state: the incidents of
 * instances and the jobs whose retries ran out (`inbox incidents` and the
 * console's incident list).
 */
import { instanceJobs } from '../engine/store/instance-doc';
import { QUERIES } from '../queries';
import { type Doc, view } from './documents';
import { incidentsOf } from './instances';
import { isoOrNull, stringOrNull } from './stored-values';
import type { FailedJobRow, IncidentList, IncidentRow, OperationsDeps } from './types';

/** The incidents an instance document keeps, each with its instance. */
function incidentRows(instance: Doc): IncidentRow[] {
  return incidentsOf(instance).map((i): IncidentRow => ({
    instanceId: instance.id,
    businessKey: stringOrNull(instance.businessKey),
    instanceStatus: String(instance.status),
    reason: String(i.reason),
    executionId: stringOrNull(i.executionId),
    activityId: stringOrNull(i.activityId),
    message: String(i.message),
    at: isoOrNull(i.at),
    resolvedAt: isoOrNull(i.resolvedAt),
    resolution: stringOrNull(i.resolution),
  }));
}

/** A job as the list shows it, from the instance document's `jobs` or a job document of the layout before them. */
function failedJobRow(j: Readonly<Record<string, unknown>>): FailedJobRow {
  return {
    id: String(j.id),
    processInstanceId: String(j.processInstanceId),
    executionId: stringOrNull(j.executionId),
    activityId: stringOrNull(j.activityId),
    status: String(j.status),
    attempts: typeof j.attempts === 'number' ? j.attempts : 0,
    lastError: stringOrNull(j.lastError),
    createdAt: isoOrNull(j.createdAt),
    finishedAt: isoOrNull(j.finishedAt),
  };
}

/**
 * The open incidents of instances in INCIDENT and the FAILED jobs of those
 * instances. A FAILED job of an instance whose incidents are resolved is
 * history (its token was moved on or cancelled): listed with `all` only, as
 * are resolved incidents. Four queries, none of them a scan: instances by
 * status, by resolved and by failed-job count, and the job documents of the
 * layout before jobs moved into the instance.
 */
export async function listIncidents(deps: OperationsDeps, options: { readonly all: boolean }): Promise<IncidentList> {
  const db = deps.db();
  const [open, resolved, withFailed, legacy] = await Promise.all([
    QUERIES.instancesByStatus.build(db, 'INCIDENT').get(),
    options.all ? QUERIES.instancesWithResolvedIncidents.build(db).get() : null,
    QUERIES.instancesWithFailedJobs.build(db).get(),
    QUERIES.jobsByStatus.build(db, 'FAILED').get(),
  ]);
  const byId = new Map<string, Doc>();
  for (const snap of [...open.docs, ...(resolved?.docs ?? [])]) byId.set(snap.id, view(snap));
  const incidents = [...byId.values()].flatMap(incidentRows).filter((i) => options.all || i.resolvedAt === null);
  const inInstances = withFailed.docs.flatMap((d) => instanceJobs(view(d)).filter((j) => j.status === 'FAILED'));
  const inIncident = new Set(open.docs.map((d) => d.id));
  const failedJobs = [...inInstances, ...legacy.docs.map(view)]
    .map((j) => failedJobRow({ ...j }))
    .filter((j) => options.all || inIncident.has(j.processInstanceId));
  return { incidents, failedJobs };
}
