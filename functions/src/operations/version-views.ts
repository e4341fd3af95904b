/**
 * The versions of a process as the console's migration view reads them:
 * the list (`inbox versions PROCESS`'s read, operations/versions.ts, with
 * its cost) reduced to what choosing a target takes, and one stored
 * version's XML with its flow nodes (their kind and scope, which a token's
 * target must share). Plain JSON out.
 */
import type { ProcessModel } from '../bpmn/model';
import { storedVersion } from './instance-model';
import { findStoredVersion } from './retire-version';
import type { OperationsDeps, ProcessVersionsView, VersionElementView, VersionModelView } from './types';
import { listVersions } from './versions';

/** The versions of `processKey`, stored ones oldest first, then those only live instances or the deployment name. */
export async function processVersions(deps: OperationsDeps, processKey: string): Promise<ProcessVersionsView> {
  const report = await listVersions(deps.db(), await deps.engine(), { processKey });
  const scan = report.processes[0];
  return {
    processKey,
    deployedVersion: scan?.deployedVersion ?? null,
    capped: scan?.capped ?? false,
    versions: report.versions.map((v) => ({
      version: v.version,
      name: v.name,
      firstDeployedAt: v.firstDeployedAt,
      stored: v.stored,
      deployed: v.deployed,
      live: v.instances.running + v.instances.incident,
      waiting: v.waiting,
    })),
  };
}

/** The flow nodes of a model, by id. */
export function elementsOf(model: ProcessModel): VersionElementView[] {
  return Object.values(model.nodes)
    .map((n) => ({ id: n.id, name: n.name, kind: n.kind, scope: n.scope ?? null }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * One stored version of `processKey` (`text`: its 16 hex digits or a prefix
 * of at least 8 naming one, as `inbox versions` lists it) with its XML and
 * elements; refuses (RefusedError) a version that is not stored.
 */
export async function versionModel(deps: OperationsDeps, processKey: string, text: string): Promise<VersionModelView> {
  const found = await findStoredVersion(deps.db(), text, processKey);
  const engine = await deps.engine();
  const read = await storedVersion(deps, engine, processKey, found.version);
  return {
    processKey,
    version: found.version,
    name: found.name,
    deployed: engine.find(processKey)?.version === found.version,
    xml: read?.xml ?? '',
    elements: read?.model === null || read === null ? [] : elementsOf(read.model),
  };
}
