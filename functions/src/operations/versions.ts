/**
 * `inbox versions`: each version of each process (engine/store/versions.ts
 * stores them in processVersions), with its instances by status, the
 * tokens of its live instances by activity, and whether new instances
 * start on it now. Shared by the CLI and, later, the console; its values
 * are plain JSON.
 *
 * Cost: one query for the stored versions (without their XML), six count()
 * aggregations per version (its instances and its items, by status), and
 * the live instances' documents read a page at a time, at most
 * `scanLimit` per process (the tokens by activity, and the versions that
 * live instances run but that are not stored, come from them).
 */
import type { Firestore, Query } from '@google-cloud/firestore';
import type { Engine } from '../engine/engine';
import { STORED } from '../engine/store/converters';
import { QUERIES } from '../queries';
import { addUsage, emptyUsage, LIVE_STATUSES, type VersionUsage } from './version-usage';

/** How many live instance documents `inbox versions` reads per process by default. */
export const SCAN_LIMIT = 5_000;
const PAGE = 500;

/** An instance count of a version, by status. */
export interface StatusCounts {
  readonly running: number;
  readonly incident: number;
  readonly completed: number;
}

/** One version of a process, as `inbox versions` lists it. */
export interface VersionRow {
  readonly processKey: string;
  /** The model's content hash (16 hex digits). */
  readonly version: string;
  /** The process's BPMN name; null when unnamed or not stored. */
  readonly name: string | null;
  /** When a function first ran it (ISO); null when it is not stored. */
  readonly firstDeployedAt: string | null;
  /** Whether processVersions holds its XML; a version live instances run but never stored runs on the deployed model. */
  readonly stored: boolean;
  /** Whether new instances start on it now (the deployed model of the app this CLI loads). */
  readonly deployed: boolean;
  /** Its instances by status (count() aggregations: exact). */
  readonly instances: StatusCounts;
  /** Its multi-instance item instances (processKey `PROCESS#ACTIVITY`) by status. */
  readonly items: StatusCounts;
  /** Live tokens of its RUNNING and INCIDENT instances by activity (of the documents read: see ProcessScan.capped). */
  readonly waiting: Readonly<Record<string, number>>;
  /** The same for its item instances. */
  readonly itemsWaiting: Readonly<Record<string, number>>;
}

/** How the live instances of a process were read. */
export interface ProcessScan {
  readonly processKey: string;
  /** The version new instances start on; null when the app does not deploy this process. */
  readonly deployedVersion: string | null;
  /** Live instance documents read (its instances and items). */
  readonly scanned: number;
  readonly scanLimit: number;
  /** Whether the limit stopped the read: the tokens by activity then count part of them, and an unstored version may be missing. */
  readonly capped: boolean;
}

export interface VersionsReport {
  readonly processes: readonly ProcessScan[];
  readonly versions: readonly VersionRow[];
}

/** What is left of a process's read, and whether the limit was reached. */
export interface ReadBudget {
  left: number;
  capped: boolean;
  scanned: number;
}

/** A stored version's fields, without its XML. */
export interface StoredVersionInfo {
  readonly processKey: string;
  readonly version: string;
  readonly name: string | null;
  readonly firstDeployedAt: Date | null;
}

/** The stored versions (of one process, or all), without their XML. */
export async function storedVersions(db: Firestore, processKey: string | null): Promise<StoredVersionInfo[]> {
  const snap = await QUERIES.storedVersionsOf.build(db, processKey).withConverter(STORED).get();
  return snap.docs.map((d) => {
    const v = d.data();
    return {
      processKey: String(v.processKey),
      version: String(v.version),
      name: typeof v.name === 'string' ? v.name : null,
      firstDeployedAt: v.firstDeployedAt instanceof Date ? v.firstDeployedAt : null,
    };
  });
}

/** The fields of a live instance that usage and paging read (not its variables). */
const LIVE_FIELDS = ['processKey', 'processVersion', 'tokens', 'jobs', 'activeExecutionIds'] as const;

/**
 * Reads pages of `page(after, n)` until the last one or the budget ends,
 * handing each document to `each`; `cursor` is what the next page starts after.
 */
async function readPages<C>(
  budget: ReadBudget,
  page: (after: C | null, n: number) => Query,
  cursor: (data: Readonly<Record<string, unknown>>, id: string) => C,
  each: (data: Readonly<Record<string, unknown>>) => void,
): Promise<void> {
  for (let after: C | null = null; ;) {
    if (budget.left <= 0) {
      budget.capped = true;
      return;
    }
    const n = Math.min(PAGE, budget.left);
    const snap = await page(after, n)
      .select(...LIVE_FIELDS)
      .withConverter(STORED)
      .get();
    budget.left -= snap.size;
    budget.scanned += snap.size;
    for (const d of snap.docs) each(d.data());
    const last = snap.docs[snap.docs.length - 1];
    if (snap.size < n || last === undefined) return;
    after = cursor(last.data(), last.id);
  }
}

/** The usage of a process's live instances (not its items) by version, as far as the budget reaches. */
export async function liveByVersion(
  db: Firestore,
  processKey: string,
  budget: ReadBudget,
): Promise<Map<string, VersionUsage>> {
  const byVersion = new Map<string, VersionUsage>();
  for (const status of LIVE_STATUSES)
    await readPages(
      budget,
      (after: string | null, n) => QUERIES.instancesOfProcess.build(db, processKey, status, after, n),
      (_data, id) => id,
      (data) => {
        const version = String(data.processVersion);
        const usage = byVersion.get(version) ?? emptyUsage();
        byVersion.set(version, usage);
        addUsage(usage, data);
      },
    );
  return byVersion;
}

/** The usage of the live item instances of one version of a process, as far as the budget reaches. */
export async function liveItems(
  db: Firestore,
  processKey: string,
  version: string,
  budget: ReadBudget,
): Promise<VersionUsage> {
  const usage = emptyUsage();
  for (const status of LIVE_STATUSES)
    await readPages(
      budget,
      (after: { processKey: string; id: string } | null, n) =>
        QUERIES.itemsOfVersion.build(db, processKey, version, status, after, n),
      (data, id) => ({ processKey: String(data.processKey), id }),
      (data) => addUsage(usage, data),
    );
  return usage;
}

const countOf = async (q: Query): Promise<number> => (await q.count().get()).data().count;

/** A version's instances and items by status: six count() aggregations. */
export async function versionCounts(
  db: Firestore,
  processKey: string,
  version: string,
): Promise<{ instances: StatusCounts; items: StatusCounts }> {
  const of = (status: string) =>
    Promise.all([
      countOf(QUERIES.instancesOfVersionByStatus.build(db, processKey, version, status, null, null)),
      countOf(QUERIES.itemsOfVersion.build(db, processKey, version, status, null, null)),
    ]);
  const [running, incident, completed] = await Promise.all([of('RUNNING'), of('INCIDENT'), of('COMPLETED')]);
  return {
    instances: { running: running[0], incident: incident[0], completed: completed[0] },
    items: { running: running[1], incident: incident[1], completed: completed[1] },
  };
}

/** A new read budget of `limit` documents. */
export const budgetOf = (limit: number): ReadBudget => ({ left: limit, capped: false, scanned: 0 });

/**
 * Every version of every process (stored, deployed, or run by live
 * instances), or of `processKey` only; see the module's comment for the cost.
 */
export async function listVersions(
  db: Firestore,
  engine: Engine,
  options: { readonly processKey: string | null; readonly scanLimit?: number },
): Promise<VersionsReport> {
  const stored = await storedVersions(db, options.processKey);
  const keys =
    options.processKey !== null
      ? [options.processKey]
      : [...new Set([...stored.map((s) => s.processKey), ...engine.processKeys])].sort();
  const processes: ProcessScan[] = [];
  const versions: VersionRow[] = [];
  for (const processKey of keys) {
    const scanLimit = options.scanLimit ?? SCAN_LIMIT;
    const budget = budgetOf(scanLimit);
    const deployedVersion = engine.find(processKey)?.version ?? null;
    const live = await liveByVersion(db, processKey, budget);
    const own = stored
      .filter((s) => s.processKey === processKey)
      .sort((a, b) => (a.firstDeployedAt?.getTime() ?? 0) - (b.firstDeployedAt?.getTime() ?? 0));
    const unstored = [...live.keys(), ...(deployedVersion === null ? [] : [deployedVersion])].filter(
      (v, i, all) => all.indexOf(v) === i && !own.some((s) => s.version === v),
    );
    const rows = [
      ...own.map((s) => ({ ...s, stored: true })),
      ...unstored.sort().map((version) => ({ version, name: null, firstDeployedAt: null, stored: false })),
    ];
    for (const row of rows) {
      const items = await liveItems(db, processKey, row.version, budget);
      const counts = await versionCounts(db, processKey, row.version);
      versions.push({
        processKey,
        version: row.version,
        name: row.name,
        firstDeployedAt: row.firstDeployedAt?.toISOString() ?? null,
        stored: row.stored,
        deployed: row.version === deployedVersion,
        ...counts,
        waiting: live.get(row.version)?.tokensByActivity ?? {},
        itemsWaiting: items.tokensByActivity,
      });
    }
    processes.push({ processKey, deployedVersion, scanned: budget.scanned, scanLimit, capped: budget.capped });
  }
  return { processes, versions };
}
