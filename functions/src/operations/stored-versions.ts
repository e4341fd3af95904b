/**
 * The stored versions of the processes (`processVersions`, engine/store/versions.ts)
 * as a model change's impact reads them: which versions exist, the newest of
 * each process (the one deployed last: latest `firstDeployedAt`), and one
 * version's model, parsed from its stored XML.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { errorMessage } from '../core/errors';
import { versionRef, versionXml } from '../engine/store/versions';
import { QUERIES } from '../queries';

/** Stored versions read at most (one small document each, without the XML). */
export const MAX_VERSIONS_READ = 10_000;

/** A stored version without its XML. */
export interface VersionEntry {
  readonly processKey: string;
  readonly version: string;
  readonly firstDeployedAt: Date | null;
}

const dateOf = (value: unknown): Date | null =>
  value instanceof Date
    ? value
    : typeof (value as { toDate?: unknown } | null)?.toDate === 'function'
      ? (value as { toDate: () => Date }).toDate()
      : null;

/** Every stored version (at most {@link MAX_VERSIONS_READ}; `capped` when there are more). */
export async function listStoredVersions(db: Firestore): Promise<{ versions: VersionEntry[]; capped: boolean }> {
  const snap = await QUERIES.storedVersionsOf
    .build(db, null)
    .limit(MAX_VERSIONS_READ + 1)
    .get();
  const versions = snap.docs.slice(0, MAX_VERSIONS_READ).flatMap((doc): VersionEntry[] => {
    const d = doc.data();
    return typeof d.processKey === 'string' && typeof d.version === 'string'
      ? [{ processKey: d.processKey, version: d.version, firstDeployedAt: dateOf(d.firstDeployedAt) }]
      : [];
  });
  return { versions, capped: snap.docs.length > MAX_VERSIONS_READ };
}

/** The newest stored version of each process: the latest first deploy (ties: the greater version id, so the answer is stable). */
export function newestVersions(versions: readonly VersionEntry[]): Map<string, VersionEntry> {
  const newest = new Map<string, VersionEntry>();
  for (const v of versions) {
    const was = newest.get(v.processKey);
    const t = v.firstDeployedAt?.getTime() ?? 0;
    const u = was?.firstDeployedAt?.getTime() ?? 0;
    if (was === undefined || t > u || (t === u && v.version > was.version)) newest.set(v.processKey, v);
  }
  return newest;
}

/** A version's model, or why there is none (not stored; its XML no longer loads). */
export async function storedModel(
  db: Firestore,
  processKey: string,
  version: string,
): Promise<{ model: ProcessModel } | { missing: string }> {
  const data = (await versionRef(db, processKey, version).get()).data();
  if (data === undefined)
    return {
      missing: `version ${version} of ${processKey} is not stored in processVersions (\`inbox versions ${processKey}\` lists those that are)`,
    };
  try {
    const model = await parseProcessModel(versionXml(data));
    return { model };
  } catch (err) {
    return { missing: `version ${version} of ${processKey} is stored but no longer loads: ${errorMessage(err)}` };
  }
}
