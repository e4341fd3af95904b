import type { Firestore } from '@google-cloud/firestore';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { appliedRepair, newRequestId, type RepairLogged, runRepair, withRepair } from '../engine/store/repair-request';
import { INBOX } from '../inbox/document';
import { processedRef } from '../inbox/processed';
import { type InboxView, laneEntryOf } from '../relay/inbox-writes';
import { withoutEntry } from '../relay/lane';
import { cell, type CliContext } from './context';
import { view } from '../operations/documents';
import { adoptedFields, type OffloadedPayload } from '../inbox/claim-check';
import { isChunkedPayload } from '../operations/offload-chunked';
import { offloadChunked } from './offload-chunked';
import { deleteRawChunks } from '../inbox/store-message';
import { RefusedError } from '../operations/refused';
import { print } from './output';

/**
 * `inbox repair admit-collision ID`: a KEY_COLLISION document is a second,
 * different payload under a dedup identity the inbox already holds. Once an
 * operator has compared the two payloads and decided the second is an event
 * of its own (two tranches the sender sent without event ids), this makes it
 * one: OPEN, due now, in its key's lane, under its own id, which is
 * deterministic (`id(["collision", firstId, payloadHash])`) and never the
 * first one's. A redelivery of either payload stays a duplicate of its own
 * document (or, after the DONE retention, of its processed record), so
 * neither can be correlated twice.
 */

/** An inbox document with what repairs leave on it. */
type Repaired = InboxView & RepairLogged;

export type AdmitCheck =
  | { readonly ok: true; readonly doc: Repaired; readonly firstId: string; readonly correlationKey: string }
  | { readonly ok: false; readonly why: string };

/** Whether a document (as read; undefined: none) can be admitted. The one check of the real run (in its transaction) and of --dry-run. */
export function checkAdmission(id: string, doc: Repaired | undefined): AdmitCheck {
  if (doc === undefined)
    return {
      ok: false,
      why: `no inbox document ${id}: check the id (\`inbox list --status PARKED --reason KEY_COLLISION\` shows them)`,
    };
  const earlier = (doc.repairs ?? []).find((r) => r.kind === ADMIT);
  if (earlier !== undefined)
    return {
      ok: false,
      why: `${id} was admitted at ${cell(earlier.at)} (request ${earlier.requestId}): it is an event of its own, now ${doc.status}`,
    };
  if (doc.status !== 'PARKED' || typeof doc.collidesWith !== 'string') {
    return {
      ok: false,
      why: `${id} is ${doc.status}${doc.reason === null ? '' : ` / ${doc.reason}`}, not a KEY_COLLISION: only a parked second payload (collidesWith set) can be admitted`,
    };
  }
  if (doc.correlationKey === null || doc.messageName === null || doc.payload === null)
    return { ok: false, why: `${id} has no readable payload: nothing to correlate` };
  return { ok: true, doc, firstId: doc.collidesWith, correlationKey: doc.correlationKey };
}

const ADMIT = 'admit-collision' as const;

export interface AdmitRequest {
  /** Chosen once per command run: a re-run of the transaction that finds it applied reports success. */
  readonly requestId: string;
  readonly note: string | null;
  readonly now: Date;
  /** The payload of a collision kept in rawChunks, just offloaded (offload-chunked.ts); recorded on the reopened document. */
  readonly offloaded?: OffloadedPayload | null;
}

export interface Admitted {
  readonly id: string;
  readonly firstId: string;
  /** True when this request had already been applied (a re-run of the transaction after a commit that landed). */
  readonly alreadyApplied: boolean;
}

/**
 * PARKED / KEY_COLLISION → OPEN in one transaction: attempts 0, due now, back
 * in its key's lane, `collidesWith` cleared (it is no longer a collision: a
 * later park of it is requeued as any other) and kept as `admittedFrom`.
 * Idempotent under the transaction's re-runs: its request id on `repairs`.
 */
export async function admitCollision(db: Firestore, id: string, request: AdmitRequest): Promise<Admitted> {
  // runRepair runs the transaction once more after an error that may hide a commit that landed.
  return runRepair(db, async (uow): Promise<Admitted> => {
    const ref = db.collection(INBOX).doc(id);
    const doc = (await uow.get(ref)) as Repaired | undefined;
    const applied = appliedRepair(doc, request.requestId, { kind: ADMIT, target: '' });
    if (applied !== null) return { id, firstId: String(applied.details.collidesWith), alreadyApplied: true };
    const check = checkAdmission(id, doc);
    if (!check.ok) throw new RefusedError(check.why);
    const key = asCorrelationKey(await uow.get(refs.correlationKey(db, check.correlationKey)), check.correlationKey);
    const reopened: InboxView = {
      ...check.doc,
      ...adoptedFields(request.offloaded ?? null),
      status: 'OPEN',
      reason: null,
      collidesWith: null,
      attempts: 0,
      nextAttemptAt: request.now,
      parkedAt: null,
    };
    const record = {
      requestId: request.requestId,
      kind: ADMIT,
      at: request.now,
      details: { note: request.note, collidesWith: check.firstId, previousReason: check.doc.reason },
    };
    saveCorrelationKey(uow, { ...key, open: [...withoutEntry(key.open, id), laneEntryOf(id, reopened)] }, request.now);
    uow.set(
      ref,
      withRepair(
        { ...reopened, admittedFrom: check.firstId, requeuedAt: request.now, previousReason: check.doc.reason },
        record,
      ),
    );
    return { id, firstId: check.firstId, alreadyApplied: false };
  });
}

/** Both payloads side by side: the first as stored, or its processed record once the DONE document expired. */
async function comparison(
  db: Firestore,
  id: string,
  second: InboxView,
  firstId: string,
): Promise<Record<string, unknown>> {
  const [firstSnap, recordSnap] = await db.getAll(db.collection(INBOX).doc(firstId), processedRef(db, firstId));
  const first = firstSnap?.exists === true ? view(firstSnap) : null;
  const record = recordSnap?.exists === true ? view(recordSnap) : null;
  return {
    first: {
      id: firstId,
      status: first?.status ?? (record === null ? 'GONE' : 'DONE (document expired)'),
      payload: first?.payload ?? null,
      processInstanceId: first?.processInstanceId ?? record?.processInstanceId ?? null,
      payloadHash: first?.payloadHash ?? record?.payloadHash ?? null,
    },
    second: {
      id,
      status: second.status,
      reason: second.reason,
      payload: second.payload,
      payloadHash: second.payloadHash,
    },
  };
}

function printComparison(
  ctx: CliContext,
  result: Record<string, unknown>,
  compared: Record<string, unknown>,
  outcome: string,
): void {
  const first = compared.first as Record<string, unknown>;
  const second = compared.second as Record<string, unknown>;
  const fields = [
    ...new Set([
      ...Object.keys((first.payload as Record<string, unknown> | null) ?? {}),
      ...Object.keys((second.payload as Record<string, unknown> | null) ?? {}),
    ]),
  ].sort();
  const field = (side: Record<string, unknown>, name: string): unknown =>
    (side.payload as Record<string, unknown> | null)?.[name] ?? (side.payload === null ? '(payload expired)' : '');
  print(
    ctx,
    { ...compared, ...result },
    ['', `first ${String(first.id)}`, `second ${String(second.id)}`],
    [
      ['status', first.status, `${String(second.status)}${second.reason === null ? '' : ` / ${cell(second.reason)}`}`],
      ...fields.map((f) => [f, field(first, f), field(second, f)]),
      ['process instance', first.processInstanceId, ''],
    ],
  );
  if (!ctx.json) ctx.io.out(outcome);
}

/** `inbox repair admit-collision ID`: a KEY_COLLISION document becomes an event of its own; --dry-run shows both payloads and what would change. */
export async function admitCollisionCommand(
  ctx: CliContext,
  id: string,
  options: { dryRun?: boolean; note?: string },
): Promise<void> {
  const db = ctx.db();
  const snap = await db.collection(INBOX).doc(id).get();
  const read = snap.exists ? (view(snap) as unknown as InboxView) : undefined;
  const check = checkAdmission(id, read);
  if (options.dryRun === true) {
    if (!check.ok) throw new RefusedError(`dry run: ${check.why}; nothing changed`);
    printComparison(
      ctx,
      { wouldAdmit: id },
      await comparison(db, id, check.doc, check.firstId),
      `would admit ${id} as an event of its own (OPEN, due now); nothing changed (run it without --dry-run to admit)`,
    );
    return;
  }
  // The transaction checks again (the real run's check); this read is only for the comparison printed after it.
  // A dead-lettered collision kept in chunks: offloaded first, as requeue does, so its process gets the whole payload.
  const offloaded = check.ok && isChunkedPayload(snap.data()) ? await offloadChunked(ctx, id, snap.data() ?? {}) : null;
  const done = await admitCollision(db, id, {
    requestId: newRequestId(),
    note: options.note ?? null,
    now: ctx.now(),
    offloaded,
  });
  if (offloaded !== null) await deleteRawChunks(db, id);
  const admittedDoc = view(await db.collection(INBOX).doc(id).get()) as unknown as InboxView;
  const message = `admitted ${id}${done.alreadyApplied ? ' (already applied)' : ''}: OPEN, due now; the relay correlates it within a minute (\`inbox show ${id}\`)`;
  printComparison(
    ctx,
    { admitted: id, alreadyApplied: done.alreadyApplied },
    await comparison(db, id, admittedDoc, done.firstId),
    message,
  );
}
