/**
 * What waits for an operator in the process state: the incidents of
 * instances and the jobs whose retries ran out (`inbox incidents` and the
 * console's incident list).
 */
import { instanceJobs } from '../engine/store/instance-doc';
import { QUERIES } from '../queries';
import { type Doc, view } from './documents';
import type { FailedJobRow, IncidentList, IncidentRow, OperationsDeps } from './types';

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);

/** The incidents an instance document keeps, each with its instance; an entry that is no object (edited by hand) is left out. */
function incidentRows(instance: Doc): IncidentRow[] {
  const stored = Array.isArray(instance.incidents) ? (instance.incidents as unknown[]) : [];
  return stored.flatMap((x): IncidentRow[] => {
    if (typeof x !== 'object' || x === null) return [];
    const i = x as Record<string, unknown>;
    return [
      {
        instanceId: instance.id,
        businessKey: text(instance.businessKey),
        instanceStatus: String(instance.status),
        reason: String(i.reason),
        executionId: text(i.executionId),
        activityId: text(i.activityId),
        message: String(i.message),
        at: iso(i.at),
        resolvedAt: iso(i.resolvedAt),
        resolution: text(i.resolution),
      },
    ];
  });
}

/** A job as the list shows it, from the instance document's `jobs` or a job document of the layout before them. */
function failedJobRow(j: Readonly<Record<string, unknown>>): FailedJobRow {
  return {
    id: String(j.id),
    processInstanceId: String(j.processInstanceId),
    executionId: text(j.executionId),
    activityId: text(j.activityId),
    status: String(j.status),
    attempts: typeof j.attempts === 'number' ? j.attempts : 0,
    lastError: text(j.lastError),
    createdAt: iso(j.createdAt),
    finishedAt: iso(j.finishedAt),
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
  const failedJobs = [...inInstances, ...legacy.docs.map(view)].map((j) => failedJobRow({ ...j })).filter((j) => options.all || inIncident.has(j.processInstanceId));
  return { incidents, failedJobs };
}
