/**
 * The model an instance page draws: the version the instance runs on (its
 * `processVersion`), not the one deployed now. The deployed version comes
 * from the deployed files (no read); an older one from processVersions (one
 * read by id, parsed once and kept by the engine); a version that is not
 * stored (an instance started before versions were kept, which runs on the
 * deployed model) falls back to the deployed model's XML, and the view says so.
 */
import type { ProcessModel } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { modelKeyOf } from '../bpmn/item-body';
import { deployedModelXml } from '../engine/deployed';
import type { Engine } from '../engine/engine';
import { versionRef, versionXml } from '../engine/store/versions';
import { modelNotes } from './model-notes';
import type { InstanceVersionView, InstanceView, OperationsDeps } from './types';

export interface InstanceModel {
  readonly version: InstanceVersionView;
  readonly model: InstanceView['model'];
}

/** The engine, or null when it cannot be loaded (the page still draws the XML, without notes and without the deployed version). */
async function engineOrNull(deps: OperationsDeps): Promise<Engine | null> {
  try {
    return await deps.engine();
  } catch {
    return null;
  }
}

/** A stored version's XML and model; null when it is not stored. A stored XML that no longer parses is drawn without notes. */
export async function storedVersion(
  deps: OperationsDeps,
  engine: Engine | null,
  base: string,
  version: string,
): Promise<{ xml: string; model: ProcessModel | null } | null> {
  const data = (await versionRef(deps.db(), base, version).get()).data();
  if (data === undefined) return null;
  const xml = versionXml(data);
  const known = engine?.at(base, version) ?? null;
  if (known !== null) return { xml, model: known };
  const parsed = await parseProcessModel(xml).catch(() => null);
  // Kept as the engine keeps a version it read for a step: the next page of this version parses nothing.
  if (parsed !== null && parsed.key === base && parsed.version === version) engine?.remember(parsed);
  return { xml, model: parsed };
}

/**
 * The model of the version an instance of `processKey` runs on (`version`,
 * its processVersion; null when the document names none). An item of a
 * multi-instance activity (`PROCESS#ACTIVITY`) is drawn on its caller's
 * model at the same version: the element ids are the same.
 */
export async function instanceModel(
  deps: OperationsDeps,
  processKey: string,
  version: string | null,
): Promise<InstanceModel> {
  const base = modelKeyOf(processKey);
  const engine = await engineOrNull(deps);
  const deployed = engine?.find(base) ?? null;
  const versionView = (drawn: InstanceVersionView['drawn']): InstanceVersionView => ({
    id: version,
    deployed: deployed?.version ?? null,
    drawn,
  });
  const own =
    version === null || version === deployed?.version ? null : await storedVersion(deps, engine, base, version);
  if (own !== null && version !== null)
    return {
      version: versionView('own'),
      model: { processKey: base, version, xml: own.xml, notes: own.model === null ? [] : modelNotes(own.model) },
    };
  const xml = await deployedModelXml(deps.modelsDir(), base);
  if (xml === null) return { version: versionView('none'), model: null };
  const drawn = version !== null && version === deployed?.version ? 'own' : 'deployed';
  return {
    version: versionView(drawn),
    model: {
      processKey: base,
      version: deployed?.version ?? (await parseProcessModel(xml)).version,
      xml,
      notes: deployed === null ? [] : modelNotes(deployed),
    },
  };
}
