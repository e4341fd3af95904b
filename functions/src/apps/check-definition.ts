/**
 * The checks of an app's declaration that need nothing but the declaration
 * (defineApp runs them): each failure names the item and what to do. Pure.
 */
/** What the checks read of a declaration (app.ts's AppDefinition is one). */
export interface DefinitionShape {
  readonly name: unknown;
  readonly messages: ReadonlyArray<{
    readonly name: unknown;
    readonly topic: unknown;
    readonly subscription?: unknown;
    readonly schema: unknown;
    readonly correlationKey: unknown;
    readonly dedupKey: unknown;
  }>;
  readonly steps: unknown;
  readonly publishes?: readonly unknown[];
  readonly sends?: ReadonlyArray<{ readonly name: unknown; readonly topic: unknown; readonly payload?: unknown }>;
  readonly collections?: readonly unknown[];
  readonly deadLetterTopic?: unknown;
  readonly keepForOlderVersions?: unknown;
}

/** An app declaration the system cannot run; the message names the item (and, from the loader, the app's file). */
export class AppDefinitionError extends Error {
  override readonly name = 'AppDefinitionError';
}

/** Pub/Sub's rule for topic and subscription names (3 to 255 characters, a letter first, no `goog` prefix). */
const PUBSUB_NAME = /^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;

/** Why Pub/Sub would refuse `name` as a topic or subscription id, or null. */
export function pubsubNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name === '') return 'is missing';
  if (!PUBSUB_NAME.test(name))
    return `${JSON.stringify(name.slice(0, 300))} is no Pub/Sub name (3 to 255 characters: a letter, then letters, digits and - _ . ~ + %)`;
  if (name.toLowerCase().startsWith('goog'))
    return `${JSON.stringify(name)} starts with "goog", which Pub/Sub reserves`;
  return null;
}

/** An app's name: it labels the deployment's subscriptions, so Cloud's label rule, kept short. */
const APP_NAME = /^[a-z][a-z0-9-]{1,39}$/;

const isZodSchema = (s: unknown): boolean =>
  typeof s === 'object' &&
  s !== null &&
  typeof (s as { safeParse?: unknown }).safeParse === 'function' &&
  typeof (s as { parse?: unknown }).parse === 'function';

/** Throws an {@link AppDefinitionError} for the first problem of the declaration. */
export function checkAppDefinition(definition: DefinitionShape): void {
  const refuse = (what: string): never => {
    throw new AppDefinitionError(what);
  };
  if (typeof definition !== 'object' || (definition as unknown) === null)
    refuse('defineApp takes one object: { name, messages, steps, … }');
  if (typeof definition.name !== 'string' || !APP_NAME.test(definition.name))
    refuse(
      `the app's name ${JSON.stringify(definition.name)} must be 2 to 40 lower-case letters, digits and dashes, a letter first`,
    );
  if (!Array.isArray(definition.messages) || definition.messages.length === 0)
    refuse('messages: declare at least one message type (defineMessage)');
  if (typeof definition.steps !== 'function')
    refuse(
      'steps: a function (context) => ({ taskId: handler, … }), even one returning {} for models without async steps',
    );
  const names = new Set<string>();
  definition.messages.forEach((m, i) => {
    const which = typeof m.name === 'string' && m.name !== '' ? `message ${m.name}` : `messages[${i}]`;
    if (typeof m.name !== 'string' || m.name.trim() === '' || m.name !== m.name.trim())
      return refuse(`${which}: name must be a non-empty name without spaces around it (the BPMN message name)`);
    if (names.has(m.name))
      refuse(
        `${which}: two message types are named ${m.name}; a name says which type a message is, so it must be unique`,
      );
    names.add(m.name);
    const topic = pubsubNameProblem(m.topic);
    if (topic !== null) refuse(`${which}: its topic ${topic}`);
    if (m.subscription !== undefined) {
      const sub = pubsubNameProblem(m.subscription);
      if (sub !== null) refuse(`${which}: its subscription ${sub}`);
    }
    if (!isZodSchema(m.schema))
      refuse(`${which}: schema must be a zod schema (z.object({ … })), the inbox validates every payload with it`);
    if (typeof m.correlationKey !== 'function' || typeof m.dedupKey !== 'function')
      refuse(`${which}: correlationKey and dedupKey must be functions of the payload`);
  });
  const sent = new Set<string>();
  (definition.sends ?? []).forEach((m, i) => {
    const which = typeof m.name === 'string' && m.name !== '' ? `sends ${m.name}` : `sends[${i}]`;
    if (typeof m.name !== 'string' || m.name.trim() === '' || m.name !== m.name.trim())
      return refuse(`${which}: name must be the BPMN message name it publishes, without spaces around it`);
    if (sent.has(m.name)) refuse(`${which}: two entries publish ${m.name}; one topic per message`);
    sent.add(m.name);
    const topic = pubsubNameProblem(m.topic);
    if (topic !== null) refuse(`${which}: its topic ${topic}`);
    if (m.payload !== undefined && typeof m.payload !== 'function')
      refuse(`${which}: payload must be a function of the variables (the message's JSON body)`);
  });
  for (const topic of definition.publishes ?? []) {
    const problem = pubsubNameProblem(topic);
    if (problem !== null) refuse(`publishes: the topic ${problem}`);
  }
  if (definition.deadLetterTopic !== undefined) {
    const problem = pubsubNameProblem(definition.deadLetterTopic);
    if (problem !== null) refuse(`deadLetterTopic: ${problem}`);
  }
  const kept = definition.keepForOlderVersions;
  if (kept !== undefined) {
    if (!Array.isArray(kept))
      refuse(
        "keepForOlderVersions: a list of the step keys (task ids or task types) kept for older versions, e.g. ['pay']",
      );
    const seen = new Set<unknown>();
    for (const key of kept as unknown[]) {
      if (typeof key !== 'string' || key.trim() === '' || key !== key.trim())
        refuse(
          `keepForOlderVersions: ${JSON.stringify(key)} is no step key (a task id or task type, as steps names it)`,
        );
      if (seen.has(key)) refuse(`keepForOlderVersions: ${String(key)} is listed twice`);
      seen.add(key);
    }
  }
  for (const c of definition.collections ?? []) {
    if (typeof c !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,99}$/.test(c))
      refuse(`collections: ${JSON.stringify(c)} is no collection name (a letter, then letters, digits, - and _)`);
  }
}
