/**
 * The stored versions of the processes (`processVersions`, engine/store/versions.ts)
 * as a model change's impact reads them: the newest of each process (latest
 * `firstDeployedAt`) among those operations/versions.ts lists, and one
 * version's model, parsed from its stored XML.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { errorMessage } from '../core/errors';
import { versionRef, versionXml } from '../engine/store/versions';
import type { StoredVersionInfo } from './versions';

/** A stored version without its XML, as operations/versions.ts's storedVersions reads it. */
export type VersionEntry = Pick<StoredVersionInfo, 'processKey' | 'version' | 'firstDeployedAt'>;

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
