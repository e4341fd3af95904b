// placeholder until the operations helpers' branches merge
import { park, requeue, RefusedError } from '../cli/inbox-ops';
import { INBOX } from '../inbox/document';
import type { Actor, OperationsDeps, RepairOutcome, RepairRequest } from './types';

/** Placeholder: requeue and park only, `by` stamped on the last repair record afterwards. */
export async function runRepairRequest(deps: OperationsDeps, request: RepairRequest, options: { preview: boolean; actor: Actor; requestId?: string }): Promise<RepairOutcome> {
  const db = deps.db();
  const now = deps.now();
  const base = { kind: request.kind, preview: options.preview, writes: [], jobs: 0, timers: 0, dispatched: 0, timersDispatched: 0, by: options.actor.id, at: now.toISOString() };
  if (request.kind !== 'requeue' && request.kind !== 'park') throw new RefusedError(`placeholder: ${request.kind} is not implemented`);
  const ref = db.collection(INBOX).doc(request.id);
  if (options.preview) {
    const snap = await ref.get();
    if (!snap.exists) throw new RefusedError(`no inbox document ${request.id}`);
    const status = snap.get('status') as unknown;
    if (request.kind === 'requeue' && status !== 'PARKED') throw new RefusedError(`${request.id} is ${String(status)}, only PARKED documents can be requeued`);
    return { ...base, target: request.id, summary: `${request.kind}s ${request.id}`, writes: [{ path: ref.path, op: 'set', fields: ['status'] }], alreadyApplied: false };
  }
  const done = request.kind === 'requeue' ? await requeue(db, request.id, now, options.requestId) : await park(db, request.id, request.text, now, options.requestId);
  const snap = await ref.get();
  const repairs = (snap.get('repairs') as Array<Record<string, unknown>> | undefined) ?? [];
  await ref.update({ repairs: repairs.map((r, i) => (i === repairs.length - 1 ? { ...r, by: options.actor.id, via: options.actor.via } : r)) });
  deps.log.info('operator repair', { kind: request.kind, target: request.id, by: options.actor.id, via: options.actor.via, requestId: options.requestId, preview: false, alreadyApplied: done.alreadyApplied, writes: 1 });
  return { ...base, target: request.id, summary: `${request.kind}d ${request.id}`, writes: [{ path: ref.path, op: 'set', fields: ['status'] }], alreadyApplied: done.alreadyApplied };
}
