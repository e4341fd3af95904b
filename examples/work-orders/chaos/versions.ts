/**
 * What the mid-run deploy came to: per process, how many of its top-level
 * instances run on each stored version, oldest version first, and how many
 * run on a version that is not stored (must be 0: the deploy kept both).
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ChaosSnapshot } from './snapshot';

export interface VersionCounts {
  /** Per process key: instances per stored version, in the order the versions were first deployed. */
  readonly byProcess: Readonly<Record<string, readonly number[]>>;
  /** Instances whose version is not stored. */
  readonly unstored: number;
}

/** The stored versions, oldest first (processVersions is read whole: the run has a project of its own). */
export async function storedVersions(
  db: Firestore,
): Promise<ReadonlyArray<{ readonly processKey: string; readonly version: string }>> {
  const docs = await db.collection('processVersions').select('processKey', 'version', 'firstDeployedAt').get();
  return docs.docs
    .map((d) => ({
      processKey: String(d.get('processKey')),
      version: String(d.get('version')),
      at: (d.get('firstDeployedAt') as { toMillis(): number }).toMillis(),
    }))
    .sort((a, b) => a.at - b.at)
    .map(({ processKey, version }) => ({ processKey, version }));
}

export function countVersions(
  snapshot: Pick<ChaosSnapshot, 'instances'>,
  stored: ReadonlyArray<{ readonly processKey: string; readonly version: string }>,
): VersionCounts {
  const byProcess: Record<string, number[]> = {};
  const slot = new Map<string, { key: string; index: number }>();
  for (const v of stored) {
    const list = (byProcess[v.processKey] ??= []);
    slot.set(`${v.processKey} ${v.version}`, { key: v.processKey, index: list.length });
    list.push(0);
  }
  let unstored = 0;
  for (const i of snapshot.instances) {
    if (i.calledBy !== null) continue;
    const at = slot.get(`${i.processKey} ${i.processVersion}`);
    if (at === undefined) unstored += 1;
    else (byProcess[at.key] as number[])[at.index] = ((byProcess[at.key] as number[])[at.index] ?? 0) + 1;
  }
  return { byProcess, unstored };
}

/** `versions: work-order-execution 1200 on v1 + 800 on v2, …, unstored 0`. */
export function versionsText(v: VersionCounts): string {
  const per = Object.entries(v.byProcess)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, counts]) => `${key} ${counts.map((n, i) => `${n} on v${i + 1}`).join(' + ')}`);
  return `versions: ${[...per, `unstored ${v.unstored}`].join(', ')}`;
}
