/**
 * For the deploy's check (`inbox model impact`): the handlers a new app
 * drops that instances of older versions of one process can still reach,
 * from where their tokens stand as readProcessLoad read them (no second
 * read of the instances). Each version's model is the one at hand (the
 * app's, the newest stored) or read once from processVersions; a version
 * not stored there (or whose XML no longer loads) cannot be walked, and is
 * listed as such with its instance count.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../bpmn/model';
import type { PositionGroup } from './model-impact';
import { storedModel } from './stored-versions';
import { type UnreachedHandler, unreachedHandlers } from './unreached-handlers';

/** A version whose instances could not be walked, and why. */
export interface UnwalkedVersion {
  readonly processKey: string;
  readonly processVersion: string;
  readonly instances: number;
  readonly why: string;
}

export async function olderVersionNeeds(
  db: Firestore,
  processKey: string,
  positions: readonly PositionGroup[],
  atHand: readonly ProcessModel[],
  /** The handlers runJob would find for a job of `model`: the app's steps, and that version's publishing steps. */
  handlersOf: (model: ProcessModel) => ReadonlySet<string>,
): Promise<{ unreached: UnreachedHandler[]; unwalked: UnwalkedVersion[]; walked: ProcessModel[] }> {
  const byVersion = new Map<string, PositionGroup[]>();
  for (const group of positions)
    byVersion.set(group.processVersion, [...(byVersion.get(group.processVersion) ?? []), group]);
  const unreached: UnreachedHandler[] = [];
  const unwalked: UnwalkedVersion[] = [];
  const walked: ProcessModel[] = [];
  for (const [version, groups] of [...byVersion].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const known = atHand.find((m) => m.key === processKey && m.version === version);
    const found = known !== undefined ? { model: known } : await storedModel(db, processKey, version);
    if ('model' in found) {
      walked.push(found.model);
      unreached.push(...unreachedHandlers(found.model, groups, handlersOf(found.model)));
    } else
      unwalked.push({
        processKey,
        processVersion: version,
        instances: groups.reduce((n, g) => n + g.instances, 0),
        why: found.missing,
      });
  }
  return { unreached, unwalked, walked };
}
