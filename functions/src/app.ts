/**
 * The one module an app imports: how a team brings its own process to the
 * inbox. An app is a folder with an `index.ts` whose default export is
 * {@link defineApp}'s value: its BPMN models, the message types that arrive
 * on its topics, the handlers of its async steps, the topics those publish
 * to and the collections they own. The inbox, the relay, the engine, the
 * deploy script, the CLI and the console take everything else from there.
 * The deployment selects one app by the setting INBOX_APP (its folder,
 * relative to the repository root). docs/your-own-process.md walks through
 * it; examples/ holds two.
 *
 * Nothing else in functions/src is for apps: the import rules refuse an
 * app's import of any other system module.
 */
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import { isRefusedAsExisting } from './core/errors';
import { stableId } from './core/hash';
import { parseDuration } from './bpmn/timer';
import { AppDefinitionError, checkAppDefinition } from './apps/check-definition';
import type { AsyncHandler, JobContext } from './jobs/handlers';
import type { ClaimCheckSpec, MessageType } from './receiver/registry';
import type { SyncHandler } from './engine/run';

export { PermanentJobError } from './jobs/handlers';
export { BpmnError } from './core/errors';
export { AppDefinitionError };
export type { ClaimCheckSpec, SyncHandler };
/** The job a step runs for and the instance it belongs to, as a handler reads them (read-only views of the stored state). */
export type { InstanceState, JobState } from './engine/state';

/**
 * One kind of message the app receives: how it is recognised (the value
 * `name` in the attribute `nameAttribute`), validated (`schema`, a zod
 * schema: unknown fields are dropped), correlated (`correlationKey`, the
 * value of the process variable its wait names) and deduplicated
 * (`dedupKey`: the business event's identity; prefer the sender's event id).
 * `name` is also the BPMN message name it correlates to, or starts a process
 * by (a message start event).
 */
export interface AppMessage<P = unknown> extends Omit<MessageType<P>, 'nameAttribute'> {
  /** The Pub/Sub topic it arrives on; deploy.sh creates it and its push subscription. Several types may share a topic. */
  readonly topic: string;
  /** The push subscription to receivePubSubPush (default `TOPIC-push`): keep an existing deployment's name here. */
  readonly subscription?: string;
  /** The attribute that names the type (default `eventType`). */
  readonly nameAttribute?: string;
}

/** What an async step's handler gets: the job, the instance as it stands, and the time. */
export type StepContext = JobContext;

/**
 * The handler of an async step (a service, send or business rule task with
 * `inbox:async="true"`): runs in runJob, outside any transaction, at least
 * once (a retry runs it again), so it must be idempotent. It returns
 * variables to merge into the instance. Throw {@link PermanentJobError} for
 * a failure no retry heals (the job fails at once, the instance shows an
 * incident); throw `BpmnError(code)` for a business outcome the model
 * handles (an error boundary event that catches the code takes the token;
 * uncaught, an incident); anything else thrown is retried.
 */
export type StepHandler = AsyncHandler;

/**
 * What a claim check's object read gives a handler: the bytes, or why there
 * are none (MISSING: deleted; CHANGED: replaced, the reference names an old
 * generation; INVALID: the text is no `gs://bucket/object#generation`).
 * A storage outage is thrown (the step is retried).
 */
export type ClaimRead =
  | { readonly kind: 'FOUND'; readonly data: Buffer }
  | { readonly kind: 'MISSING' }
  | { readonly kind: 'CHANGED'; readonly liveGeneration: string }
  | { readonly kind: 'INVALID'; readonly why: string };

/** The clients an app's handlers use, created on first use (a function pays in cold start only for what it touches). */
export interface AppContext {
  /** The Firestore client of the deployment. */
  readonly db: () => Firestore;
  /** Publishes to one of the app's `publishes` topics (any other is refused: the deployment granted only those); returns the message id. */
  readonly publish: (topic: string, data: Buffer, attributes?: Readonly<Record<string, string>>) => Promise<string>;
  /** Reads the object a claim-check variable names (`gs://bucket/object#generation`), pinned to its generation. */
  readonly readClaim: (uri: string) => Promise<ClaimRead>;
}

/**
 * A message the app's models publish (a message throw or end event, or a
 * send task with a `messageRef` naming it): after the commit of the step
 * that reached the element, a job publishes it to `topic`, its body the
 * JSON of `payload(variables)` (default: every variable), its attributes the
 * name (`nameAttribute`, default `eventType`) and `inboxMessageId`, the
 * job's id, also a field of the body: a retried publish carries the same
 * id, so a receiver (another inbox: `dedupKey` from that field) keeps one.
 */
export interface AppSend {
  readonly name: string;
  readonly topic: string;
  readonly nameAttribute?: string;
  readonly payload?: (variables: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;
}

/** What a team declares: see {@link defineApp}. */
export interface AppDefinition {
  /** The app's name: lower-case letters, digits and dashes (it labels the deployment's subscriptions). */
  readonly name: string;
  /**
   * The folder of its `.bpmn` models, relative to the app's folder (default
   * `bpmn`, beside index.ts). It may lead out of the app's folder to another
   * inside the repository, as the default app's does (`../../bpmn`, the
   * repository's top-level bpmn/); one outside the repository is refused.
   */
  readonly models?: string;
  readonly messages: readonly AppMessage[];
  /**
   * The handlers of its async steps, by the BPMN task id (or, for a task
   * with a `zeebe:taskDefinition`, by its type, which several tasks may
   * share), made once per process from the clients. Every async task of the
   * models needs one, and every handler a task (or a place in
   * `keepForOlderVersions`): both are checked when the app is loaded.
   */
  readonly steps: (context: AppContext) => Readonly<Record<string, StepHandler>>;
  /**
   * Keys of `steps` kept only for instances of older versions: handlers no
   * task of the models names any more (the new version removed or renamed
   * the task) but that instances started on an older version can still
   * reach (`inbox model impact` names them). Handlers serve every version,
   * so keep each one here until `inbox versions` shows no running instance
   * of a version that draws it, then remove it from here and from `steps`.
   * The app check refuses a key here that no handler has, or that a task of
   * the models names (that is no older version's).
   */
  readonly keepForOlderVersions?: readonly string[];
  /** Pure handlers of synchronous service tasks (no `inbox:async`), by task id: they run inside the transaction. */
  readonly syncSteps?: Readonly<Record<string, SyncHandler>>;
  /** Topics its handlers publish to: deploy.sh creates them and grants the jobs' account publishing. */
  readonly publishes?: readonly string[];
  /** Messages its models publish by themselves (message throw and end events, send tasks with a messageRef); their topics join `publishes`. */
  readonly sends?: readonly AppSend[];
  /** Firestore collections its handlers write (listed by `inbox app`; the system never writes them). */
  readonly collections?: readonly string[];
  /** Where Pub/Sub moves what it gives up on (default `NAME-dlt`); its push subscription is `TOPIC-push`. */
  readonly deadLetterTopic?: string;
}

/** An app as the system loads it: the definition with its defaults filled in. */
export interface App {
  readonly name: string;
  readonly models: string;
  readonly messages: readonly (AppMessage & { readonly subscription: string; readonly nameAttribute: string })[];
  readonly steps: AppDefinition['steps'];
  readonly keepForOlderVersions: readonly string[];
  readonly syncSteps: Readonly<Record<string, SyncHandler>>;
  readonly publishes: readonly string[];
  readonly sends: readonly (AppSend & { readonly nameAttribute: string })[];
  readonly collections: readonly string[];
  readonly deadLetterTopic: string;
}

/**
 * Declares an app. Checks the declaration itself and throws an
 * {@link AppDefinitionError} naming the item: a name that is not one, a
 * message without a topic, two messages of one name, a topic name Pub/Sub
 * refuses, a schema that is not a zod schema, a `steps` that is no function.
 * What needs the models (a task without a handler, a handler without a
 * task) is checked when the app is loaded (`inbox app check`, every start).
 */
export function defineApp(definition: AppDefinition): App {
  checkAppDefinition(definition);
  return Object.freeze({
    name: definition.name,
    models: definition.models ?? 'bpmn',
    messages: definition.messages.map((m) => ({
      ...m,
      subscription: m.subscription ?? `${m.topic}-push`,
      nameAttribute: m.nameAttribute ?? 'eventType',
    })),
    steps: definition.steps,
    keepForOlderVersions: [...(definition.keepForOlderVersions ?? [])],
    syncSteps: definition.syncSteps ?? {},
    publishes: [...new Set([...(definition.publishes ?? []), ...(definition.sends ?? []).map((m) => m.topic)])],
    sends: (definition.sends ?? []).map((m) => ({ ...m, nameAttribute: m.nameAttribute ?? 'eventType' })),
    collections: [...(definition.collections ?? [])],
    deadLetterTopic: definition.deadLetterTopic ?? `${definition.name}-dlt`,
  });
}

/**
 * A message type with its payload type kept where it is written, erased for
 * the app's list (a handler's parameters are bivariant, so no cast).
 */
export function defineMessage<P>(message: AppMessage<P>): AppMessage {
  return message;
}

/**
 * A key a message may carry (a correlation or dedup key): a trimmed string
 * of 1 to 256 characters, the bounds the inbox keeps keys to. Use it in
 * message schemas for the fields the keys come from.
 */
export const keyString = (): z.ZodString => z.string().trim().min(1).max(256);

/**
 * An ISO 8601 duration (`P10D`, `PT4H`) as the engine's timers read it:
 * use it in a message schema for a field a timer takes (`${documentsDeadline}`),
 * so a message with a duration no timer could use is refused at receipt
 * (INVALID_PAYLOAD, with the reason), not later by the timer.
 */
export const durationString = (): z.ZodType<string> =>
  z.string().superRefine((text, ctx) => {
    const parsed = parseDuration(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
  });

/**
 * A deterministic document id for what a handler writes once (one record
 * per business key, one per job): the same parts give the same id, so a
 * re-run finds the first write (`create()` fails ALREADY_EXISTS) instead of
 * writing a second. Hashed, so any text is a valid id.
 */
export function recordId(kind: string, ...parts: readonly string[]): string {
  return stableId(kind, ...parts);
}

/**
 * Whether a Firestore write failed because the document exists already
 * (ALREADY_EXISTS of a `create()`, also inside a batch): what a handler's
 * second run meets when its first one wrote the record.
 */
export function isAlreadyExists(err: unknown): boolean {
  return isRefusedAsExisting(err);
}
