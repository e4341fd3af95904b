/**
 * `inbox migrate`: instances of one version of a process moved to another
 * version, each in its own transaction (engine/store/migrate-instance.ts),
 * in bounded batches. A preview is every instance's real transaction rolled
 * back, as for every repair (repairs.ts): the same reads, plan and
 * refusals, nothing written; it returns the expect line that holds the real
 * run to it. The real run refuses, instance by instance, one that changed
 * since the preview or that it did not list, and goes on with the others;
 * after each commit it dispatches the Cloud Tasks of the timers it set and
 * logs the one line of an applied repair. The same request id again skips
 * what is done (resumable).
 */
import type { Firestore } from '@google-cloud/firestore';
import { formatMigrationExpect } from '../engine/migration/expect';
import { type ElementMapping, mappingErrors, type TokenMove } from '../engine/migration/plan';
import { migrateInstance, storedVersion } from '../engine/store/migrate-instance';
import { newRequestId, RepairRefusedError } from '../engine/store/repair-request';
import { type VersionRead, versionRef } from '../engine/store/versions';
import type { WriteSink } from '../engine/store/unit-of-work';
import { QUERIES } from '../queries';
import { dispatchAfterRepair } from './dispatch-after-repair';
import { RefusedError } from './refused';
import { findStoredVersion } from './retire-version';
import type { Actor, OperationsDeps } from './types';

/** How many instances one batch takes (one transaction each). */
export const MIGRATE_BATCH = 50;

/** Which instances, of which process, from and to which version, by which mapping. */
export interface MigrateRun {
  readonly processKey: string;
  readonly from: string;
  readonly to: string;
  readonly mapping: ElementMapping;
  /** Named instances, or every RUNNING and INCIDENT instance of the process at `from`. */
  readonly instances: readonly string[] | 'all';
}

export interface MigrateRunOptions {
  readonly preview: boolean;
  readonly actor: Actor;
  /** One per run; the same id again skips the instances it migrated. Default: a new one. */
  readonly requestId?: string;
  /** The preview's fingerprints by instance id (expect.ts); absent: not held to a preview. */
  readonly expect?: ReadonlyMap<string, string>;
  /** Called after each batch with how many instances are done so far. */
  readonly onBatch?: (done: number) => void;
  readonly batchSize?: number;
}

export type InstanceVerdict = 'MIGRATED' | 'WOULD_MIGRATE' | 'ALREADY_MIGRATED' | 'REFUSED';

/** One instance's outcome: its moves, or why it was refused. */
export interface InstanceMigration {
  readonly instanceId: string;
  readonly verdict: InstanceVerdict;
  readonly moves: readonly TokenMove[];
  readonly reason: string | null;
  /** The documents its transaction writes (would write, previewed). */
  readonly writes: number;
  readonly timersDispatched: number;
}

export interface MigrationOutcome {
  readonly preview: boolean;
  readonly processKey: string;
  readonly from: string;
  readonly to: string;
  readonly mapping: ElementMapping;
  readonly requestId: string;
  readonly instances: readonly InstanceMigration[];
  /** A preview's line for `--expect`: the instances it would migrate, each with its fingerprint; null for a real run. */
  readonly expect: string | null;
  readonly by: string;
}

/**
 * Runs (or previews) a migration; refuses up front (RefusedError) a version
 * that is not stored (`from` and `to`: a stored version or a prefix of at
 * least 8 hex digits naming one) or a mapping that names no element.
 */
export async function migrateInstances(
  deps: OperationsDeps,
  asked: MigrateRun,
  options: MigrateRunOptions,
): Promise<MigrationOutcome> {
  const db = deps.db();
  const engine = await deps.engine();
  // As `inbox versions` names them: a prefix of at least 8 hex digits of a stored version.
  const run: MigrateRun = {
    ...asked,
    from: (await findStoredVersion(db, asked.from, asked.processKey)).version,
    to: (await findStoredVersion(db, asked.to, asked.processKey)).version,
  };
  const stored: VersionRead = async (processKey, version) => (await versionRef(db, processKey, version).get()).data();
  const models = await Promise.all(
    [run.from, run.to].map((v) => storedVersion(engine, run.processKey, v, stored)),
  ).catch((err: unknown) => {
    throw err instanceof RepairRefusedError ? new RefusedError(err.message) : err;
  });
  const [source, target] = models as [(typeof models)[0], (typeof models)[0]];
  const errors = mappingErrors(source, target, run.mapping);
  if (errors.length > 0) throw new RefusedError(errors.join('; '));
  const requestId = options.requestId ?? newRequestId();
  const results: InstanceMigration[] = [];
  const fingerprints = new Map<string, string>();
  const one = async (instanceId: string): Promise<void> => {
    const sink: WriteSink = { rollback: options.preview, writes: [] };
    const expect = options.expect === undefined ? {} : { expect: options.expect.get(instanceId) ?? null };
    try {
      const done = await migrateInstance(
        db,
        engine,
        { processInstanceId: instanceId, ...run, now: deps.now(), requestId },
        { actor: options.actor, sink, ...expect },
      );
      if (done.fingerprint !== null) fingerprints.set(instanceId, done.fingerprint);
      let timersDispatched = 0;
      if (!options.preview) {
        timersDispatched = (await dispatchAfterRepair(deps, { jobs: [], timers: done.timers }, deps.log))
          .timersDispatched;
        deps.log.info('operator repair', {
          kind: 'migrate',
          target: instanceId,
          by: options.actor.id,
          via: options.actor.via,
          requestId,
          preview: false,
          alreadyApplied: done.alreadyApplied,
          writes: sink.writes.length,
        });
      }
      const verdict = options.preview ? 'WOULD_MIGRATE' : done.alreadyApplied ? 'ALREADY_MIGRATED' : 'MIGRATED';
      results.push({
        instanceId,
        verdict,
        moves: done.moves,
        reason: null,
        writes: sink.writes.length,
        timersDispatched,
      });
    } catch (err) {
      if (!(err instanceof RepairRefusedError)) throw err;
      results.push({ instanceId, verdict: 'REFUSED', moves: [], reason: err.message, writes: 0, timersDispatched: 0 });
    }
  };
  for await (const batch of batches(db, run, options.batchSize ?? MIGRATE_BATCH)) {
    // One transaction per instance, a few at a time: the batch bounds what is in flight.
    for (let i = 0; i < batch.length; i += 8) await Promise.all(batch.slice(i, i + 8).map(one));
    options.onBatch?.(results.length);
  }
  results.sort((a, b) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0));
  return {
    preview: options.preview,
    ...run,
    requestId,
    instances: results,
    expect: options.preview ? formatMigrationExpect(fingerprints) : null,
    by: options.actor.id,
  };
}

/** The instances a run takes, a batch at a time: the named ones, or every RUNNING and INCIDENT one at `from`, paged by id. */
async function* batches(db: Firestore, run: MigrateRun, size: number): AsyncGenerator<string[]> {
  if (run.instances !== 'all') {
    const named = [...new Set(run.instances)];
    for (let i = 0; i < named.length; i += size) yield named.slice(i, i + size);
    return;
  }
  for (const status of ['RUNNING', 'INCIDENT']) {
    let after: string | null = null;
    for (;;) {
      const filter = { processKey: run.processKey, version: run.from, status };
      const page = await QUERIES.instancesOfVersion.build(db, filter, after, size).get();
      if (page.empty) break;
      yield page.docs.map((d) => d.id);
      after = page.docs[page.docs.length - 1]?.id ?? null;
      if (page.size < size) break;
    }
  }
}
