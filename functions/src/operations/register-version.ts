/**
 * `inbox versions --register FILE.bpmn`: stores a model's version as a
 * deploy does (engine/store/versions.ts, registerVersions), so that
 * instances started on that XML before versions were stored (their
 * processVersion is the file's content hash) run on it again instead of on
 * the deployed model. The upgrade path for instances started before this
 * release: check the old model file out of git and register it.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../bpmn/model';
import { STORED } from '../engine/store/converters';
import { registerVersions, versionRef } from '../engine/store/versions';
import { QUERIES } from '../queries';
import { LIVE_STATUSES } from './version-usage';

/** What registering a version found and did. */
export interface RegisteredVersion {
  readonly processKey: string;
  readonly version: string;
  readonly name: string | null;
  /** `now`: stored by this call; `already`: it was stored before (the first storing is kept). */
  readonly stored: 'now' | 'already';
  /** When it was first stored (ISO). */
  readonly firstDeployedAt: string | null;
  /** Live (RUNNING, INCIDENT) instances of the process that run this version: they run on it from their next step. */
  readonly liveInstances: number;
}

/** Stores `model` (parsed from `xml`) unless its version is stored; counts the live instances that run it. */
export async function registerVersion(
  db: Firestore,
  model: ProcessModel,
  xml: string,
  now: Date,
): Promise<RegisteredVersion> {
  const created = await registerVersions(db, [model], async () => xml, now);
  const stored = (await versionRef(db, model.key, model.version).withConverter(STORED).get()).data();
  const counts = await Promise.all(
    LIVE_STATUSES.map(
      async (s) =>
        (
          await QUERIES.instancesOfVersionByStatus.build(db, model.key, model.version, s, null, null).count().get()
        ).data().count,
    ),
  );
  const first = stored?.firstDeployedAt;
  return {
    processKey: model.key,
    version: model.version,
    name: model.name,
    stored: created > 0 ? 'now' : 'already',
    firstDeployedAt: first instanceof Date ? first.toISOString() : null,
    liveInstances: counts.reduce((a, b) => a + b, 0),
  };
}
