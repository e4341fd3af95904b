import type { DocumentReference, Firestore, Transaction } from '@google-cloud/firestore';
import { STORED, type StoredData } from './converters';
import { changedFields, type UnitWrite } from './write-plan';

/**
 * A Firestore transaction that lets code read and write in any order.
 * Firestore requires every read before the first write; composing engine
 * steps (correlate, then update the inbox, then guard a waiting point) would
 * break that. Reads go through at once (by id only: a query inside a
 * transaction serialises concurrent transactions on the emulator) and are
 * cached; writes are buffered and applied when the callback returns.
 * Counts reads and writes, for the relay's summary and the benchmarks.
 */
export class UnitOfWork {
  private readonly cache = new Map<string, StoredData | undefined>();
  private readonly writes = new Map<
    string,
    { ref: DocumentReference; op: 'create' | 'set' | 'delete'; data?: Record<string, unknown> }
  >();
  reads = 0;

  constructor(
    readonly db: Firestore,
    private readonly tx: Transaction,
  ) {}

  /** The document's data (Timestamps as Dates), or undefined; sees this unit's own pending writes. */
  async get(ref: DocumentReference): Promise<StoredData | undefined> {
    const pending = this.writes.get(ref.path);
    if (pending !== undefined) return pending.op === 'delete' ? undefined : pending.data;
    if (this.cache.has(ref.path)) return this.cache.get(ref.path);
    this.reads += 1;
    const data = (await this.tx.get(ref.withConverter(STORED))).data();
    this.cache.set(ref.path, data);
    return data;
  }

  /** The document as this unit read it from Firestore (not its own pending writes); undefined when it was absent or not read. */
  stored(ref: DocumentReference): StoredData | undefined {
    return this.cache.get(ref.path);
  }

  /** Creates a document that must not exist (the commit fails with ALREADY_EXISTS otherwise). */
  create(ref: DocumentReference, data: Record<string, unknown>): void {
    const known = this.cache.get(ref.path);
    // A document read as absent in this unit and created now is a plain set.
    this.writes.set(ref.path, { ref, op: this.cache.has(ref.path) && known === undefined ? 'set' : 'create', data });
  }

  set(ref: DocumentReference, data: Record<string, unknown>): void {
    const previous = this.writes.get(ref.path);
    this.writes.set(ref.path, { ref, op: previous?.op === 'create' ? 'create' : 'set', data });
  }

  delete(ref: DocumentReference): void {
    const previous = this.writes.get(ref.path);
    if (previous?.op === 'create') this.writes.delete(ref.path);
    else this.writes.set(ref.path, { ref, op: 'delete' });
  }

  get writeCount(): number {
    return this.writes.size;
  }

  /**
   * The buffered writes as a person reviews them: each document, how it is
   * written, and which top-level fields change against what this unit read
   * of it (a document it did not read counts as new: all its fields).
   */
  plannedWrites(): UnitWrite[] {
    return [...this.writes.values()].map(({ ref, op, data }) => {
      // A set of a document this unit read as absent creates it.
      const planned =
        op === 'set' && this.cache.has(ref.path) && this.cache.get(ref.path) === undefined ? 'create' : op;
      return {
        path: ref.path,
        op: planned,
        fields:
          op === 'delete' ? [] : changedFields(op === 'create' ? undefined : this.cache.get(ref.path), data ?? {}),
      };
    });
  }

  /** Applies the buffered writes to the transaction. Called once, by {@link runUnitOfWork}. */
  flush(): void {
    for (const { ref, op, data } of this.writes.values()) {
      if (op === 'delete') this.tx.delete(ref);
      else if (op === 'create') this.tx.create(ref, data ?? {});
      else this.tx.set(ref, data ?? {});
    }
  }
}

/**
 * Counters of one unit of work: the reads of every attempt (a contention
 * retry reads again, and Firestore bills reads whether or not the attempt
 * commits) and the writes of the attempt that committed (the writes of an
 * attempt that did not commit were never made).
 */
export interface UnitStats {
  readonly reads: number;
  readonly writes: number;
}

/**
 * A running total that several units of work add to as they go, so a caller
 * also counts the reads of a transaction that ended in an error (which
 * returns no stats). A transaction abandoned at a deadline of the caller may
 * add to it after the caller has moved on; those late counts are missed.
 */
export interface StatsTally {
  reads: number;
  writes: number;
}

/**
 * Where a unit of work puts the writes of its attempt (the last attempt's
 * replace an earlier one's). With `rollback`, the unit is a preview: `work`
 * runs with every read and check of the real run, then the transaction is
 * rolled back instead of committed, so nothing is written.
 */
export interface WriteSink {
  readonly rollback: boolean;
  writes: readonly UnitWrite[];
}

/** Thrown out of a preview's transaction callback so that Firestore rolls it back; carries what `work` returned. */
class PreviewRollback extends Error {
  override readonly name = 'PreviewRollback';
  constructor(readonly value: unknown) {
    super('preview: rolled back on purpose');
  }
}

/**
 * Runs `work` in a Firestore transaction through a UnitOfWork. `work` may run
 * several times (contention): it must not have side effects beyond the unit.
 * The stats cover every attempt (see {@link UnitStats}); `tally`, if given,
 * is added to attempt by attempt. `sink`: see {@link WriteSink}.
 */
export async function runUnitOfWork<T>(
  db: Firestore,
  work: (uow: UnitOfWork) => Promise<T>,
  options: { maxAttempts?: number; tally?: StatsTally; sink?: WriteSink } = {},
): Promise<{ result: T; stats: UnitStats }> {
  let reads = 0;
  let writes = 0;
  const { sink } = options;
  const attempt = async (tx: Transaction): Promise<T> => {
    const uow = new UnitOfWork(db, tx);
    try {
      const value = await work(uow);
      if (sink !== undefined) {
        sink.writes = uow.plannedWrites();
        // A callback that throws is rolled back and not run again (only a failed commit is retried).
        if (sink.rollback) throw new PreviewRollback(value);
      }
      uow.flush();
      // Only the attempt whose commit succeeds is the last one to get here.
      writes = uow.writeCount;
      return value;
    } finally {
      reads += uow.reads;
      if (options.tally !== undefined) options.tally.reads += uow.reads;
    }
  };
  // The value of a preview (thrown out of the callback so that Firestore rolls back), else of the committed attempt.
  const result = await db.runTransaction(attempt, { maxAttempts: options.maxAttempts ?? 5 }).catch((err: unknown) => {
    if (err instanceof PreviewRollback) return err.value as T;
    throw err;
  });
  if (options.tally !== undefined) options.tally.writes += writes;
  return { result, stats: { reads, writes } };
}
