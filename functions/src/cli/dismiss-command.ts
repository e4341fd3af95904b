import type { Firestore } from '@google-cloud/firestore';
import { userInfo } from 'node:os';
import { appliedRepair, newRequestId, type RepairLogged, runRepair, withRepair } from '../engine/store/repair-request';
import { doneRetention } from '../inbox/claim-check';
import { INBOX } from '../inbox/document';
import { processedRecord, processedRef } from '../inbox/processed';
import type { InboxView, Retention } from '../relay/inbox-writes';
import type { CliContext } from './context';
import { view } from '../operations/documents';
import { RefusedError } from '../operations/refused';
import { ALREADY_APPLIED, print } from './output';
import { UsageError } from './parse';

/**
 * `inbox repair dismiss ID --note TEXT`: a PARKED document the business has
 * settled without processing it (a repeated start parked ALREADY_STARTED,
 * a late completion nobody will take) becomes DONE, recorded as dismissed:
 * who, when, the note and the reason it was parked for. In the same
 * transaction its processed record is written, as for any DONE document,
 * so a redelivery or a replay of the message stays a duplicate and is never
 * stored (and relayed) as new. The document keeps its payload and park
 * details until the DONE retention's TTL, the record after it; one whose
 * payload is offloaded, or whose raw bytes are in `rawChunks` (an
 * unreadable message), waits for the payload sweep instead, which deletes
 * the object or the chunks with it (the TTL would leave them behind).
 */

/** An inbox document with what repairs leave on it. */
type Repaired = InboxView & RepairLogged & { readonly parkDetails?: Readonly<Record<string, unknown>> | null };

const DISMISS = 'dismiss' as const;

export type DismissCheck =
  | { readonly ok: true; readonly doc: Repaired; readonly processInstanceId: string | null }
  | { readonly ok: false; readonly why: string };

/** Whether a document (as read; undefined: none) can be dismissed: the one check of the real run (in its transaction) and of --dry-run. */
export function checkDismissal(id: string, doc: Repaired | undefined): DismissCheck {
  if (doc === undefined)
    return { ok: false, why: `no inbox document ${id}: check the id (\`inbox list --status PARKED\` shows them)` };
  if (doc.status !== 'PARKED') {
    const hint =
      doc.status === 'OPEN'
        ? ': the relay still decides on an OPEN one (`inbox park ID --reason TEXT` stops that, then dismiss it)'
        : ': it is processed already';
    return { ok: false, why: `${id} is ${doc.status}, only a PARKED document can be dismissed${hint}` };
  }
  const fromPark = doc.parkDetails?.processInstanceId;
  const processInstanceId =
    typeof fromPark === 'string' ? fromPark : typeof doc.processInstanceId === 'string' ? doc.processInstanceId : null;
  return { ok: true, doc, processInstanceId };
}

export interface DismissRequest {
  /** Chosen once per command run: a re-run of the transaction that finds it applied reports success. */
  readonly requestId: string;
  readonly note: string;
  /** Who dismisses it (the operator). */
  readonly by: string;
  readonly now: Date;
  /** expireAt of the DONE document and of its processed record. */
  readonly retention: Retention;
}

export interface Dismissed {
  readonly id: string;
  readonly previousReason: string | null;
  /** The instance it concerned (ALREADY_STARTED: the one that exists), or null. */
  readonly processInstanceId: string | null;
  /** True when this request had already been applied (a re-run of the transaction after a commit that landed). */
  readonly alreadyApplied: boolean;
}

/**
 * PARKED → DONE (`correlatedVia: DISMISSED`, `dismissed: {by, at, note,
 * previousReason, requestId}`, `expireAt`, or `payloadExpireAt` for an
 * offloaded payload or raw bytes in chunks) and its processed record, in one
 * transaction. A PARKED document has no entry in its key's lane (the relay
 * takes it out before it parks), so the lane is not touched. Idempotent
 * under the transaction's re-runs: its request id on `repairs`.
 */
export async function dismiss(db: Firestore, id: string, request: DismissRequest): Promise<Dismissed> {
  return runRepair(db, async (uow): Promise<Dismissed> => {
    const ref = db.collection(INBOX).doc(id);
    const doc = (await uow.get(ref)) as Repaired | undefined;
    const applied = appliedRepair(doc, request.requestId, { kind: DISMISS, target: '' });
    if (applied !== null) {
      const { previousReason, processInstanceId } = applied.details;
      return {
        id,
        previousReason: typeof previousReason === 'string' ? previousReason : null,
        processInstanceId: typeof processInstanceId === 'string' ? processInstanceId : null,
        alreadyApplied: true,
      };
    }
    const check = checkDismissal(id, doc);
    if (!check.ok) throw new RefusedError(check.why);
    const { now } = request;
    const previousReason = check.doc.reason;
    const dismissed = { by: request.by, at: now, note: request.note, previousReason, requestId: request.requestId };
    const done = {
      ...check.doc,
      status: 'DONE',
      reason: null,
      processInstanceId: check.processInstanceId,
      processedAt: now,
      // As the relay's DONE: a document with an object or chunks waits for the payload sweep (payloadExpireAt), not the TTL.
      ...doneRetention(check.doc, now, request.retention.doneMs),
      correlatedVia: 'DISMISSED',
      nextAttemptAt: null,
      dismissed,
    };
    const record = {
      requestId: request.requestId,
      kind: DISMISS,
      at: now,
      details: { note: request.note, by: request.by, previousReason, processInstanceId: check.processInstanceId },
    };
    uow.set(ref, withRepair(done, record));
    uow.set(processedRef(db, id), {
      ...processedRecord(check.doc, check.processInstanceId, 'DISMISSED', now, request.retention.recordMs),
    });
    return { id, previousReason, processInstanceId: check.processInstanceId, alreadyApplied: false };
  });
}

/** The operator's name as the system knows it; `--by` overrides it. */
function operator(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry (some containers): the note still says why, and --by can say who.
    return process.env.USER ?? 'unknown';
  }
}

/** `inbox repair dismiss ID --note TEXT`: a PARKED document the business has settled becomes DONE, recorded with who, when and why; --dry-run shows what would change. */
export async function dismissCommand(
  ctx: CliContext,
  id: string,
  options: { note: string; by?: string; dryRun?: boolean },
): Promise<void> {
  const note = options.note.trim();
  if (note === '') throw new UsageError('--note: say why the document is dismissed (it is kept with the document)');
  const by = (options.by ?? operator()).trim() || 'unknown';
  const db = ctx.db();
  if (options.dryRun === true) {
    const snap = await db.collection(INBOX).doc(id).get();
    const check = checkDismissal(id, snap.exists ? (view(snap) as unknown as Repaired) : undefined);
    if (!check.ok) throw new RefusedError(`dry run: ${check.why}; nothing changed`);
    const would = {
      wouldDismiss: id,
      previousReason: check.doc.reason,
      processInstanceId: check.processInstanceId,
      by,
      note,
    };
    print(
      ctx,
      would,
      ['id', 'parked for', 'instance', 'by', 'note'],
      [[id, check.doc.reason, check.processInstanceId, by, note]],
    );
    if (!ctx.json)
      ctx.io.out(
        `would dismiss ${id}: DONE, recorded as dismissed; nothing changed (run it without --dry-run to dismiss)`,
      );
    return;
  }
  const config = ctx.config.relay;
  const done = await dismiss(db, id, {
    requestId: newRequestId(),
    note,
    by,
    now: ctx.now(),
    retention: { doneMs: config.retentionMs, recordMs: config.recordRetentionMs },
  });
  print(
    ctx,
    {
      dismissed: id,
      previousReason: done.previousReason,
      processInstanceId: done.processInstanceId,
      by,
      note,
      alreadyApplied: done.alreadyApplied,
    },
    ['id', 'was parked for', 'instance', 'by', 'note'],
    [[id, done.previousReason, done.processInstanceId, by, note]],
  );
  if (!ctx.json)
    ctx.io.out(`dismissed ${id}: DONE, recorded (\`inbox explain ${id}\`); a redelivery of it stays a duplicate`);
  if (done.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
