import {
  handlerKeyOf,
  type JobDefinition,
  type MessageStartEventNode,
  ModelError,
  type ProcessModel,
  publishStepKey,
} from '../bpmn/model';
import type { WaitingPoint } from './state';
import { itemBodyModel } from '../bpmn/item-body';
import type { UnitOfWork } from './store/unit-of-work';
import type { SyncHandler } from './run';

/**
 * Messages that arrived before anyone waited for them (the inbox, seen from
 * the engine). When a token starts waiting, the same transaction asks the
 * buffer for the oldest such message of its key and, if there is one,
 * delivers it at once: what Zeebe does with a message time-to-live.
 */
export interface MessageBuffer {
  /**
   * If the oldest buffered message of the point's key is one this point waits
   * for, consume it within `uow` and return its variables; otherwise null.
   */
  take(
    uow: UnitOfWork,
    point: WaitingPoint,
    now: Date,
  ): Promise<{ readonly inboxId: string; readonly variables: Readonly<Record<string, unknown>> } | null>;
}

/** A message start event of a deployed model: what a message of its name starts. */
export interface MessageStart {
  readonly model: ProcessModel;
  readonly node: MessageStartEventNode;
}

/**
 * The deployed process models and their synchronous handlers, validated
 * together: every task of every model must have a handler of the right kind,
 * so a missing one fails at start-up, not when a token arrives; and a
 * message name starts at most one process, so a start message never has to
 * choose.
 */
export class Engine {
  private readonly models: ReadonlyMap<string, ProcessModel>;
  /** The models the items of multi-instance activities run (bpmn/item-body.ts), by their key `PROCESS#ACTIVITY`. */
  private readonly itemBodies: ReadonlyMap<string, ProcessModel>;
  private readonly starts: ReadonlyMap<string, MessageStart>;

  constructor(
    models: readonly ProcessModel[],
    /** Pure handlers of synchronous tasks, by task id. */
    readonly sync: Readonly<Record<string, SyncHandler>>,
    /** The keys of the async handlers runJob knows: task ids and types, and publishing steps' publishStepKey. */
    asyncHandlerIds: ReadonlySet<string>,
    /** Where early messages wait; null: no buffering (a message must find its waiting point). */
    readonly buffer: MessageBuffer | null = null,
  ) {
    const byKey = new Map<string, ProcessModel>();
    const starts = new Map<string, MessageStart>();
    for (const model of models) {
      if (byKey.has(model.key)) throw new ModelError(`two models define process ${model.key}`, model.key);
      byKey.set(model.key, model);
      for (const nodeId of Object.values(model.messageStartEvents)) {
        const node = model.nodes[nodeId];
        if (node?.kind !== 'messageStartEvent')
          throw new ModelError(
            `messageStartEvents of ${model.key} names ${nodeId}, which is no message start event`,
            nodeId,
          );
        const other = starts.get(node.messageName);
        if (other !== undefined) {
          throw new ModelError(
            `message ${node.messageName} starts process ${other.model.key} (${other.node.id}) already: a message name may start one deployed process only`,
            node.id,
          );
        }
        starts.set(node.messageName, { model, node });
      }
      for (const node of Object.values(model.nodes)) {
        // runJob looks a job's handler up as the system's publishing step of this model's element, then by its task
        // type, then by its element's id.
        const hasAsync = (n: { id: string; job?: JobDefinition }): boolean =>
          asyncHandlerIds.has(publishStepKey(model.key, n.id)) ||
          asyncHandlerIds.has(n.id) ||
          (n.job !== undefined && asyncHandlerIds.has(n.job.type));
        if (node.kind === 'messageThrowEvent' || node.kind === 'messageEndEvent') {
          if (!hasAsync(node))
            throw new ModelError(
              node.messageName === null
                ? `no handler of type ${handlerKeyOf(node)} is registered for this event`
                : `nothing publishes message ${node.messageName}: declare it in the app's sends, or give steps a handler ${handlerKeyOf(node)}`,
              node.id,
            );
          continue;
        }
        if (node.kind !== 'serviceTask' && node.kind !== 'sendTask' && node.kind !== 'businessRuleTask') continue;
        const known = node.async ? hasAsync(node) : Object.prototype.hasOwnProperty.call(sync, node.id);
        if (!known)
          throw new ModelError(
            `no ${node.async ? 'async' : 'synchronous'} handler is registered for this task`,
            node.id,
          );
      }
    }
    for (const model of models) {
      for (const node of Object.values(model.nodes)) {
        if (node.kind !== 'callActivity') continue;
        const called = byKey.get(node.calledProcess);
        if (called === undefined)
          throw new ModelError(
            `calledElement ${node.calledProcess} is no process of this app (deployed: ${[...byKey.keys()].join(', ')})`,
            node.id,
          );
        if (called.startEventId === null)
          throw new ModelError(
            `calledElement ${node.calledProcess} has no none start event, where a call activity starts it (it starts by ${Object.keys(called.messageStartEvents).length > 0 ? 'message' : 'timer'} only): give it a none start event, or call another process`,
            node.id,
          );
      }
    }
    this.models = byKey;
    this.itemBodies = new Map(
      models.flatMap((model) =>
        Object.values(model.nodes).flatMap((node) => {
          if (node.loop === undefined) return [];
          const body = itemBodyModel(model, node.id);
          return [[body.key, body] as const];
        }),
      ),
    );
    this.starts = starts;
  }

  /** The message start event a message of this name starts, or null (the name starts no deployed process). */
  startsByMessage(messageName: string): MessageStart | null {
    return this.starts.get(messageName) ?? null;
  }

  /** The model of a process key, or null. */
  find(processKey: string): ProcessModel | null {
    return this.models.get(processKey) ?? null;
  }

  /** The model of a process key (or of a multi-instance activity's items); null for a key not deployed (any more). */
  deployed(processKey: string): ProcessModel | null {
    return this.models.get(processKey) ?? this.itemBodies.get(processKey) ?? null;
  }

  /** The model of a process key (or of a multi-instance activity's items); throws for an unknown key (stored state names only deployed models). */
  model(processKey: string): ProcessModel {
    const model = this.deployed(processKey);
    if (model === null) throw new ModelError(`process ${processKey} is not deployed`, processKey);
    return model;
  }

  /** Versions loaded beside the deployed ones (store/versions.ts), by `KEY@VERSION`: an older model's instances run on it. */
  private readonly older = new Map<string, ProcessModel>();

  /**
   * The model of `processKey` (a process, or `PROCESS#ACTIVITY` for the items
   * of a multi-instance activity) at `version`: the deployed one when it is
   * that version, else one {@link remember}ed; null when this engine has not
   * got it (the store reads it from processVersions).
   */
  at(processKey: string, version: string): ProcessModel | null {
    const deployed = this.deployed(processKey);
    if (deployed !== null && deployed.version === version) return deployed;
    const known = this.older.get(`${processKey}@${version}`);
    if (known !== undefined) return known;
    const [base, activity] = processKey.split('#');
    if (activity === undefined || base === undefined) return null;
    const model = this.older.get(`${base}@${version}`);
    if (model === undefined || model.nodes[activity]?.loop === undefined) return null;
    const body = itemBodyModel(model, activity);
    this.older.set(`${processKey}@${version}`, body);
    return body;
  }

  /** Versions met that are not stored (`KEY@VERSION`): their instances ran on the deployed model; the relay logs them. */
  private readonly unstored = new Set<string>();

  private readonly reported = new Set<string>();

  /** Notes a version met without its stored XML (its instance runs on the deployed model). */
  noteUnstored(processKey: string, version: string): void {
    const key = `${processKey}@${version}`;
    if (!this.reported.has(key)) this.unstored.add(key);
  }

  /** The versions noted and not yet taken: each is taken once in the life of this engine, to be logged once. */
  takeUnstored(): string[] {
    const found = [...this.unstored];
    for (const key of found) this.reported.add(key);
    this.unstored.clear();
    return found;
  }

  /** Keeps an older version of a deployed process's model (read from processVersions), so its instances run on it. */
  remember(model: ProcessModel): void {
    this.older.set(`${model.key}@${model.version}`, model);
  }

  get processKeys(): string[] {
    return [...this.models.keys()];
  }
}
