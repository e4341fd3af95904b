import type { Firestore } from '@google-cloud/firestore';
import { randomUUID } from 'node:crypto';
import { DeadlineExceededError, errorCode } from '../../core/errors';
import type { RepairBasis } from '../repair-basis';
import { runUnitOfWork, type UnitOfWork, type WriteSink } from './unit-of-work';

/**
 * Idempotent repairs. The Firestore SDK runs a transaction callback again
 * when a commit reports UNAVAILABLE, DEADLINE_EXCEEDED or UNKNOWN, also when
 * that commit landed. A repair that decides afresh on the re-run sees its own
 * work and refuses ("already OPEN"), or does it twice (a second token). So
 * every repair command chooses one request id per run ({@link newRequestId}),
 * the transaction records it on the document it changes ({@link withRepair}),
 * and looks for it first ({@link appliedRepair}): found, the repair is
 * "already applied", a success that reports what the first attempt did.
 */

/** Which operator command recorded a repair. */
export type RepairKind =
  'requeue' | 'park' | 'move-token' | 'cancel-token' | 'resolve-incident' | 'admit-collision' | 'dismiss' | 'migrate';

/** One applied repair, kept on the document it changed (`repairs`, the last {@link REPAIRS_KEPT}). */
export interface RepairRecord {
  /** Chosen once per command run; the same for every attempt of its transactions. */
  readonly requestId: string;
  readonly kind: RepairKind;
  /**
   * What the request named beyond the document it is recorded on (a move's
   * token and activity, a cancel's token); absent for repairs of the document
   * itself and on records stored before requests were bound to their target.
   */
  readonly target?: string;
  readonly at: Date;
  /** Who did it (an e-mail, or `user@host` of the CLI); absent on records stored before repairs recorded it. */
  readonly by?: string;
  /** Through which face: the `inbox` CLI or the console; absent as `by`. */
  readonly via?: RepairActor['via'];
  /** What the repair did, as a re-run reports it (plain values only: they are stored). */
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * How many repair records a document keeps. A re-run follows its commit
 * within seconds, so it only has to find its own among the latest; the list
 * stays bounded however often a document is repaired.
 */
export const REPAIRS_KEPT = 20;

/** A stored document that may carry repair records. */
export interface RepairLogged {
  readonly repairs?: readonly RepairRecord[];
}

/**
 * A process repair refused, nothing changed: its instance or token does not
 * exist, it would create a second waiting point for a key (unless forced), or
 * the cause of an incident persists. The message says which.
 */
export class RepairRefusedError extends Error {
  override readonly name = 'RepairRefusedError';
}

/** Who runs a repair (the shape of operations' Actor: engine/ does not import operations/). */
export interface RepairActor {
  readonly id: string;
  readonly via: 'cli' | 'console';
}

/** What every repair function takes besides its request: who runs it, and whether it only previews (see {@link runRepair}). */
export interface RepairOptions {
  /** Recorded as `by`/`via` on what it changes; absent: not recorded (callers that predate actors). */
  readonly actor?: RepairActor;
  /** Receives the writes of the transaction; with `rollback`, the repair is a preview and nothing is written. */
  readonly sink?: WriteSink;
  /**
   * The basis its preview read (engine/repair-basis.ts): the repair refuses
   * if what it reads now differs. Absent: no preview to hold it to.
   */
  readonly expect?: RepairBasis;
}

/**
 * What a request id is bound to: the repair's kind and what it names beyond
 * the document it is recorded on ('' when nothing: a requeue of that
 * document, a resolve of that instance's incidents).
 */
export interface RepairBinding {
  readonly kind: RepairKind;
  readonly target: string;
}

/** The record of one applied repair, with its actor when there is one. */
export function repairRecord(
  binding: RepairBinding,
  requestId: string,
  at: Date,
  details: Readonly<Record<string, unknown>>,
  actor: RepairActor | undefined,
): RepairRecord {
  return {
    requestId,
    kind: binding.kind,
    ...(binding.target === '' ? {} : { target: binding.target }),
    at,
    ...(actor === undefined ? {} : { by: actor.id, via: actor.via }),
    details,
  };
}

/** A request id for one run of a repair command. */
export const newRequestId = (): string => randomUUID();

/**
 * The record of `requestId` on a document as read in the transaction, or
 * null: not applied (yet). A request id is bound to its repair: a record of
 * another kind or target under the same id refuses ({@link RepairRefusedError}),
 * so an id reused for another repair is never taken for "already applied".
 */
export function appliedRepair(
  doc: object | null | undefined,
  requestId: string,
  binding: RepairBinding,
): RepairRecord | null {
  const repairs = (doc as RepairLogged | null | undefined)?.repairs;
  if (!Array.isArray(repairs)) return null;
  const record = (repairs as readonly RepairRecord[]).find((r) => r.requestId === requestId) ?? null;
  if (record === null) return null;
  // Records stored before requests were bound carry no target: their kind is all there is to compare.
  const sameTarget = record.target === undefined || record.target === binding.target;
  if (record.kind !== binding.kind || !sameTarget) {
    const named = record.target === undefined ? record.kind : `${record.kind} ${record.target}`;
    const at = record.at instanceof Date ? ` at ${record.at.toISOString()}` : '';
    throw new RepairRefusedError(
      `refused: request id ${requestId} was used for another repair (${named})${at}; a different repair needs its own request id: nothing was done`,
    );
  }
  return record;
}

/** The document with `record` appended to its repairs (the last {@link REPAIRS_KEPT} kept). */
export function withRepair<T extends object>(
  doc: T,
  record: RepairRecord,
): T & { readonly repairs: readonly RepairRecord[] } {
  const stored = (doc as RepairLogged).repairs;
  // Array.isArray types a readonly array as any[]; the declared type keeps the records typed.
  const before: readonly RepairRecord[] = Array.isArray(stored) ? stored : [];
  return { ...doc, repairs: [...before, record].slice(-REPAIRS_KEPT) };
}

/**
 * Whether a failed repair transaction may have committed all the same: an
 * error from the wire (a gRPC status or a socket error) or a deadline. Our
 * own refusals carry no code. The emulator, for one, answers the SDK's resent
 * commit of a transaction that did commit with INVALID_ARGUMENT.
 */
export function outcomeUnknown(err: unknown): boolean {
  return err instanceof DeadlineExceededError || errorCode(err) !== undefined;
}

/**
 * Runs a repair's transaction. `work` must look for its request id first
 * ({@link appliedRepair}) and record it with what it changes ({@link withRepair}).
 * If the transaction fails with an error after which it may have committed
 * ({@link outcomeUnknown}), `work` runs once more in a new transaction with
 * the same request id: it then finds its record (it had committed: "already
 * applied"), or applies the repair now, or fails again (the error is thrown).
 *
 * With a `sink` that rolls back (a preview), `work` runs exactly as in the
 * real run, refusals included, and the writes it would make go to the sink;
 * the transaction is rolled back, so nothing is written and nothing can have
 * committed: no verifying re-run.
 */
export async function runRepair<T>(
  db: Firestore,
  work: (uow: UnitOfWork) => Promise<T>,
  options: { readonly verifyRuns?: number; readonly sink?: WriteSink } = {},
): Promise<T> {
  const verifyRuns = options.verifyRuns ?? 1;
  const { sink } = options;
  for (let run = 0; ; run++) {
    try {
      return (await runUnitOfWork(db, work, sink === undefined ? {} : { sink })).result;
    } catch (err) {
      if (sink?.rollback === true || run >= verifyRuns || !outcomeUnknown(err)) throw err;
    }
  }
}
