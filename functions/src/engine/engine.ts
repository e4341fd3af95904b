import { ModelError, type ProcessModel } from './model';
import type { SyncHandler } from './transitions';

/**
 * The deployed process models and their synchronous handlers, validated
 * together: every task of every model must have a handler of the right kind,
 * so a missing one fails at start-up, not when a token arrives.
 */
export class Engine {
  private readonly models: ReadonlyMap<string, ProcessModel>;

  constructor(
    models: readonly ProcessModel[],
    /** Pure handlers of synchronous tasks, by task id. */
    readonly sync: Readonly<Record<string, SyncHandler>>,
    /** Ids of tasks whose async handlers runJob knows. */
    asyncHandlerIds: ReadonlySet<string>,
  ) {
    const byKey = new Map<string, ProcessModel>();
    for (const model of models) {
      if (byKey.has(model.key)) throw new ModelError(`two models define process ${model.key}`, model.key);
      byKey.set(model.key, model);
      for (const node of Object.values(model.nodes)) {
        if (node.kind !== 'serviceTask' && node.kind !== 'sendTask') continue;
        const known = node.async ? asyncHandlerIds.has(node.id) : Object.prototype.hasOwnProperty.call(sync, node.id);
        if (!known) throw new ModelError(`no ${node.async ? 'async' : 'synchronous'} handler is registered for this task`, node.id);
      }
    }
    this.models = byKey;
  }

  /** The model of a process key, or null. */
  find(processKey: string): ProcessModel | null {
    return this.models.get(processKey) ?? null;
  }

  /** The model of a process key; throws for an unknown key (stored state names only deployed models). */
  model(processKey: string): ProcessModel {
    const model = this.models.get(processKey);
    if (model === undefined) throw new ModelError(`process ${processKey} is not deployed`, processKey);
    return model;
  }

  get processKeys(): string[] {
    return [...this.models.keys()];
  }
}
