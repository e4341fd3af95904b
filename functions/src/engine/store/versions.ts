/**
 * Versions of a process model. An instance runs on the version it started
 * on (its `processVersion`, the model's content hash) for as long as
 * anything of it exists; a deploy changes what new instances start on, not
 * what waiting ones run. Each version's XML is kept in
 * `processVersions/{id(["process-version", KEY, VERSION])}` (gzipped, so a
 * large diagram fits a document), written when a function first loads that
 * model (registerVersions), read when an instance of an older version takes
 * a step (modelOf) and then kept by the engine, so a warm function reads it
 * once, not per step.
 */
import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ProcessModel } from '../../bpmn/model';
import { parseProcessModel } from '../../bpmn/parse-model';
import { modelKeyOf } from '../../bpmn/item-body';
import { isRefusedAsExisting, StepFailedError } from '../../core/errors';
import { sha256Hex } from '../../core/hash';
import type { Engine } from '../engine';
import { processVersionId } from '../ids';
import type { InstanceState } from '../state';
import { COLLECTIONS } from './collections';
import type { UnitOfWork } from './unit-of-work';

export const versionRef = (db: Firestore, processKey: string, version: string): DocumentReference =>
  db.collection(COLLECTIONS.processVersions).doc(processVersionId(processKey, version));

/** A stored version, as `processVersions/{id}` holds it. */
export interface StoredVersion {
  readonly processKey: string;
  readonly version: string;
  /** The model's BPMN `name`, or null. */
  readonly name: string | null;
  /** The BPMN XML, gzipped. */
  readonly xmlGzip: Buffer;
  /** When a function first ran it. */
  readonly firstDeployedAt: Date;
}

/** The XML of a stored version. */
export function versionXml(data: Readonly<Record<string, unknown>>): string {
  const bytes = data.xmlGzip;
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : bytes instanceof Uint8Array
      ? Buffer.from(bytes)
      : typeof (bytes as { toUint8Array?: unknown } | undefined)?.toUint8Array === 'function'
        ? Buffer.from((bytes as { toUint8Array: () => Uint8Array }).toUint8Array())
        : null;
  if (buffer === null) throw new StepFailedError('a stored process version without its XML');
  return gunzipSync(buffer).toString('utf8');
}

/** The document of a model version. */
export function versionDoc(model: ProcessModel, xml: string, now: Date): StoredVersion {
  return {
    processKey: model.key,
    version: model.version,
    name: model.name,
    xmlGzip: gzipSync(xml),
    firstDeployedAt: now,
  };
}

/** The version a model parsed from `xml` has (ProcessModel.version: the first 16 hex digits of its SHA-256). */
export const versionOfXml = (xml: string): string => sha256Hex(xml).slice(0, 16);

/**
 * Stores each of `models` whose version is not stored yet (its XML by
 * `xmlOf`), keeping the first time one was seen. One read per model (a
 * batched get), a create per new version; a create that finds the version
 * stored meanwhile (another function started at the same time) is done.
 * An XML that is not the model's (the file changed after the model was
 * read) is never stored under the model's version: that model is skipped,
 * and the next load stores what it reads.
 */
export async function registerVersions(
  db: Firestore,
  models: readonly ProcessModel[],
  xmlOf: (processKey: string) => Promise<string | null>,
  now: Date,
): Promise<number> {
  if (models.length === 0) return 0;
  const snaps = await db.getAll(...models.map((m) => versionRef(db, m.key, m.version)));
  let created = 0;
  for (const [i, snap] of snaps.entries()) {
    const model = models[i];
    if (snap.exists || model === undefined) continue;
    const xml = await xmlOf(model.key);
    if (xml === null || versionOfXml(xml) !== model.version) continue;
    try {
      await versionRef(db, model.key, model.version).create({ ...versionDoc(model, xml, now) });
      created += 1;
    } catch (err) {
      if (!isRefusedAsExisting(err)) throw err;
    }
  }
  return created;
}

/**
 * The model an instance runs: its own version. The deployed one, or one the
 * engine loaded before, costs no read; another is read from processVersions
 * once (through the unit of work) and kept by the engine. A version that is
 * not stored (an instance started before versions were kept, or on a model
 * that was never registered) runs on the deployed model, as every instance
 * did before, and the engine notes it for the relay's log.
 */
export async function modelOf(
  uow: UnitOfWork,
  engine: Engine,
  instance: Pick<InstanceState, 'processKey' | 'processVersion'>,
): Promise<ProcessModel> {
  return modelRead(engine, instance, (processKey, version) => uow.get(versionRef(uow.db, processKey, version)));
}

/** {@link modelOf} outside a transaction (runJob's view of a task, an operator's read): a plain read by id. */
export async function modelOutside(
  db: Firestore,
  engine: Engine,
  instance: Pick<InstanceState, 'processKey' | 'processVersion'>,
): Promise<ProcessModel> {
  return modelRead(engine, instance, async (processKey, version) =>
    (await versionRef(db, processKey, version).get()).data(),
  );
}

/** Reads a stored version's document (`processVersions`) by process key and version; undefined: not stored. */
export type VersionRead = (
  processKey: string,
  version: string,
) => Promise<Readonly<Record<string, unknown>> | undefined>;

async function modelRead(
  engine: Engine,
  instance: Pick<InstanceState, 'processKey' | 'processVersion'>,
  read: VersionRead,
): Promise<ProcessModel> {
  const { processKey, processVersion } = instance;
  const known = engine.at(processKey, processVersion);
  if (known !== null) return known;
  const base = modelKeyOf(processKey);
  const model = await storedModel(engine, base, processVersion, read);
  if (model === null) {
    engine.noteUnstored(base, processVersion);
    return engine.model(processKey);
  }
  const found = engine.at(processKey, processVersion);
  if (found === null) throw new StepFailedError(`version ${processVersion} of ${base} has no ${processKey}`);
  return found;
}

/**
 * One stored version of a process (its own key, not an item's): the one the
 * engine holds costs no read; another is read through `read`, checked to be
 * what was asked for, and kept by the engine. Null when it is not stored:
 * a step then runs on the deployed model (modelOf), a migration is refused.
 */
export async function storedModel(
  engine: Engine,
  processKey: string,
  version: string,
  read: VersionRead,
): Promise<ProcessModel | null> {
  const known = engine.at(processKey, version);
  if (known !== null) return known;
  const data = await read(processKey, version);
  if (data === undefined) return null;
  const model = await parseProcessModel(versionXml(data)).catch((err: unknown) => {
    throw new StepFailedError(
      `version ${version} of ${processKey} no longer loads: ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  if (model.key !== processKey || model.version !== version)
    throw new StepFailedError(
      `processVersions holds ${model.key}@${model.version} where ${processKey}@${version} was expected`,
    );
  engine.remember(model);
  return model;
}
