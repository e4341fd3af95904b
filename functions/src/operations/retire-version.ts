/**
 * `inbox versions --retire`: deletes a stored process version
 * (`processVersions/{id}`) that nothing uses any more, and refuses
 * otherwise, naming what still uses it. What uses a version: its live
 * instances (RUNNING, INCIDENT: every status but COMPLETED) and live item
 * instances of its multi-instance activities, with their pending jobs,
 * scheduled timers and open user tasks (all held by those instances: a
 * job, timer or user task of an instance that is not live has nothing left
 * to move). The version new instances start on now is never retired.
 *
 * A transaction reads by id and never queries (unit-of-work.ts), so the
 * users are found by queries first; the transaction then re-reads the
 * version by id and deletes it, held to what the queries found (the
 * repair's basis, `--expect`). Nothing starts a new instance of a version
 * that is not deployed (new instances and called processes start on the
 * deployed one, items on their parent's, which is live only if the parent
 * is); a repair that adds a token to a COMPLETED instance of it after the
 * queries ran makes it RUNNING again on a version no longer stored: it then
 * runs on the deployed model, and the relay logs the version.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine/engine';
import { checkBasis, type RepairBasis, versionBasis } from '../engine/repair-basis';
import { runUnitOfWork, type WriteSink } from '../engine/store/unit-of-work';
import { versionRef } from '../engine/store/versions';
import { QUERIES } from '../queries';
import { RefusedError } from './refused';
import { addUsage, countedIds, emptyUsage, FIRST_IDS, LIVE_STATUSES, type VersionUsage } from './version-usage';
import { budgetOf, storedVersions, type StoredVersionInfo } from './versions';

/** How many live instance documents a retire reads for the jobs, timers and user tasks it names. */
const USERS_READ = 1_000;

/** A version's text as the operator gives it: 8 to 16 hex digits (a prefix of the content hash). */
export const VERSION_TEXT = /^[0-9a-f]{8,16}$/;

/** The stored version `text` (a prefix of at least 8 hex digits) names, of `processKey` or of any process. */
export async function findStoredVersion(
  db: Firestore,
  text: string,
  processKey: string | null,
): Promise<StoredVersionInfo> {
  const prefix = text.toLowerCase();
  const all = await storedVersions(db, processKey);
  const found = all.filter((v) => v.version.startsWith(prefix));
  const where = processKey === null ? '' : ` of process ${processKey}`;
  if (found.length === 0)
    throw new RefusedError(
      `no stored version ${text}${where}: \`inbox versions${processKey === null ? '' : ` ${processKey}`}\` lists them`,
    );
  if (found.length > 1)
    throw new RefusedError(
      `${text} names ${found.length} stored versions (${found.map((v) => `${v.processKey} ${v.version}`).join(', ')}): give more digits, or the process`,
    );
  return found[0] as StoredVersionInfo;
}

/** What still uses a version: its live instances and items (exact counts), and what the documents read hold. */
export interface VersionUsers {
  readonly instances: number;
  readonly items: number;
  /** The first few live instance and item ids. */
  readonly ids: readonly string[];
  readonly usage: VersionUsage;
  /** Whether the documents read were only part of them: jobs, timers and user tasks are then "at least". */
  readonly partial: boolean;
}

/** Finds what uses a version: count() of its live instances and items, and up to {@link USERS_READ} of their documents. */
export async function versionUsers(db: Firestore, processKey: string, version: string): Promise<VersionUsers> {
  const count = async (items: boolean, status: string): Promise<number> =>
    (
      await (
        items
          ? QUERIES.itemsOfVersion.build(db, processKey, version, status, null, null)
          : QUERIES.instancesOfVersionByStatus.build(db, processKey, version, status, null, null)
      )
        .count()
        .get()
    ).data().count;
  const counts = await Promise.all(LIVE_STATUSES.flatMap((s) => [count(false, s), count(true, s)]));
  const instances = counts.filter((_, i) => i % 2 === 0).reduce((a, b) => a + b, 0);
  const items = counts.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
  const usage = emptyUsage();
  const ids: string[] = [];
  const budget = budgetOf(USERS_READ);
  if (instances + items > 0) {
    for (const status of LIVE_STATUSES) {
      for (const ofItems of [false, true]) {
        if (budget.left <= 0) break;
        const q = ofItems
          ? QUERIES.itemsOfVersion.build(db, processKey, version, status, null, budget.left)
          : QUERIES.instancesOfVersionByStatus.build(db, processKey, version, status, null, budget.left);
        const snap = await q.select('tokens', 'jobs', 'activeExecutionIds').get();
        budget.left -= snap.size;
        for (const d of snap.docs) {
          if (ids.length < FIRST_IDS) ids.push(d.id);
          addUsage(usage, d.data());
        }
      }
    }
  }
  return { instances, items, ids, usage, partial: instances + items > USERS_READ };
}

/** What still uses the version, in words; null when nothing does. */
export function usersText(users: VersionUsers): string | null {
  if (users.instances + users.items === 0) return null;
  const { usage, partial } = users;
  const live = [
    `${users.instances} live instance${users.instances === 1 ? '' : 's'}`,
    ...(users.items === 0 ? [] : [`${users.items} live item instance${users.items === 1 ? '' : 's'}`]),
  ].join(' and ');
  return [
    `${live} (${users.ids.join(', ')}${users.instances + users.items > users.ids.length ? ', …' : ''})`,
    countedIds(usage.pendingJobs, 'pending job', 'pending jobs', partial),
    countedIds(usage.timers, 'scheduled timer', 'scheduled timers', partial),
    countedIds(usage.userTasks, 'open user task', 'open user tasks', partial),
  ].join(', ');
}

/** What a retire read and did. */
export interface RetiredVersion {
  readonly processKey: string;
  readonly version: string;
  readonly basis: RepairBasis;
  readonly completed: number;
}

/**
 * Retires a stored version: refused (RefusedError, nothing changed) when it
 * is the deployed one or anything uses it; else deletes it in a transaction
 * that re-reads it by id, held to `expect` (the preview's basis). With a
 * rolling-back `sink`, a preview.
 */
export async function retireVersion(
  db: Firestore,
  engine: Engine,
  request: { readonly processKey: string; readonly version: string },
  options: { readonly sink: WriteSink; readonly expect?: RepairBasis },
): Promise<RetiredVersion> {
  const { processKey, version } = request;
  const named = `version ${version} of ${processKey}`;
  if (engine.find(processKey)?.version === version)
    throw new RefusedError(
      `refused: ${named} is the one deployed now (new instances start on it): deploy another version first`,
    );
  const users = await versionUsers(db, processKey, version);
  const uses = usersText(users);
  if (uses !== null)
    throw new RefusedError(
      `refused: ${named} is still used by ${uses}: retire it once they have completed (\`inbox versions ${processKey}\` shows them)`,
    );
  const completed = (
    await QUERIES.instancesOfVersionByStatus.build(db, processKey, version, 'COMPLETED', null, null).count().get()
  ).data().count;
  const { result } = await runUnitOfWork(
    db,
    async (uow) => {
      const ref = versionRef(db, processKey, version);
      const stored = await uow.get(ref);
      if (stored === undefined) throw new RefusedError(`no stored ${named}: retired already?`);
      const since = stored.firstDeployedAt instanceof Date ? stored.firstDeployedAt : null;
      const basis = versionBasis(processKey, version, since, users.instances + users.items);
      checkBasis(options.expect, basis, named);
      uow.delete(ref);
      return basis;
    },
    { sink: options.sink },
  );
  return { processKey, version, basis: result, completed };
}
