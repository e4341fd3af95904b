import { join } from 'node:path';
import { z } from 'zod';
import { type AppDefinition, AppDefinitionError, defineApp, defineMessage } from '../../functions/src/app';
import { checkApp } from '../../functions/src/apps/check-app';
import { loadApp, modelsFolder, packageRoot } from '../../functions/src/apps/load-app';
import { topologyOf } from '../../functions/src/apps/topology';

/**
 * Bad input at the door: an app declaration the system cannot run is
 * refused when it is declared, built or started, with one line naming the
 * item (and, from the loader, the app's file), never a crash at the first
 * message.
 */
const message = (over: Record<string, unknown> = {}) =>
  defineMessage({
    name: 'Ping',
    topic: 'pings',
    schema: z.object({ id: z.string() }),
    correlationKey: (p: { id: string }) => p.id,
    dedupKey: (p: { id: string }) => p.id,
    ...over,
  });
const app = (over: Partial<Record<keyof AppDefinition, unknown>> = {}): AppDefinition =>
  ({ name: 'pinger', messages: [message()], steps: () => ({}), ...over }) as AppDefinition;
const refusal = (definition: AppDefinition): string => {
  try {
    defineApp(definition);
  } catch (err) {
    expect(err).toBeInstanceOf(AppDefinitionError);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('defineApp: what the declaration alone refuses', () => {
  test('a sound declaration gets its defaults: models bpmn/, subscriptions TOPIC-push, eventType, NAME-dlt', () => {
    const a = defineApp(app());
    expect(a).toMatchObject({
      name: 'pinger',
      models: 'bpmn',
      deadLetterTopic: 'pinger-dlt',
      publishes: [],
      collections: [],
    });
    expect(a.messages[0]).toMatchObject({ subscription: 'pings-push', nameAttribute: 'eventType' });
  });

  test.each([
    [
      'a name that is no name',
      app({ name: 'Pinger App' }),
      /the app's name "Pinger App" must be 2 to 40 lower-case letters/,
    ],
    ['no message types', app({ messages: [] }), /messages: declare at least one message type/],
    ['steps that are no function', app({ steps: { ship: async () => ({}) } }), /steps: a function \(context\) =>/],
    [
      'a message without a topic',
      app({ messages: [message({ topic: undefined })] }),
      /message Ping: its topic is missing/,
    ],
    [
      'two message types with one name',
      app({ messages: [message(), message({ topic: 'pongs' })] }),
      /message Ping: two message types are named Ping/,
    ],
    [
      'a topic name Pub/Sub refuses',
      app({ messages: [message({ topic: 'a b' })] }),
      /message Ping: its topic "a b" is no Pub\/Sub name/,
    ],
    [
      "a topic in Google's reserved prefix",
      app({ messages: [message({ topic: 'goog-pings' })] }),
      /starts with "goog", which Pub\/Sub reserves/,
    ],
    [
      'a schema that is not zod',
      app({ messages: [message({ schema: { type: 'object' } })] }),
      /message Ping: schema must be a zod schema/,
    ],
    [
      'keys that are no functions',
      app({ messages: [message({ correlationKey: 'id' })] }),
      /message Ping: correlationKey and dedupKey must be functions/,
    ],
    ['a publish topic Pub/Sub refuses', app({ publishes: ['x'] }), /publishes: the topic "x" is no Pub\/Sub name/],
    ['a collection that is no name', app({ collections: ['a/b'] }), /collections: "a\/b" is no collection name/],
  ])('%s', (_what, definition, reason) => {
    expect(refusal(definition)).toMatch(reason);
  });
});

describe('the topology', () => {
  test('types sharing a topic share its subscription; the dead letters get their own', () => {
    const t = topologyOf(defineApp(app({ messages: [message(), message({ name: 'Pong' })], publishes: ['pokes'] })));
    expect(t).toEqual({
      app: 'pinger',
      inbound: [{ topic: 'pings', subscription: 'pings-push', messages: ['Ping', 'Pong'] }],
      deadLetter: { topic: 'pinger-dlt', subscription: 'pinger-dlt-push' },
      publishes: ['pokes'],
      collections: [],
    });
  });

  test('one topic, two subscription names; a dead-letter topic that is also inbound: refused', () => {
    expect(() =>
      topologyOf(defineApp(app({ messages: [message(), message({ name: 'Pong', subscription: 'other' })] }))),
    ).toThrow(/share the topic pings but name two subscriptions/);
    expect(() => topologyOf(defineApp(app({ deadLetterTopic: 'pings' })))).toThrow(
      /the dead-letter topic pings is also a topic messages arrive on/,
    );
  });
});

describe('loading an app: the refusal names its file', () => {
  test('a declaration defineApp refuses, when its file loads', () => {
    expect(() => loadApp('test/fixtures/apps/bad-topic')).toThrow(
      /^test\/fixtures\/apps\/bad-topic\/index\.ts: message Ping: its topic "goog-pings" starts with "goog"/,
    );
  });

  test('a folder without an app, and one outside the repository', () => {
    expect(() => loadApp('test/fixtures/apps/none')).toThrow(
      /INBOX_APP=test\/fixtures\/apps\/none: no test\/fixtures\/apps\/none\/index\.ts/,
    );
    expect(() => loadApp('../elsewhere')).toThrow(/an app is a folder inside the repository/);
  });

  test("the models folder: the app's own, one elsewhere in the repository, never one outside it", async () => {
    const root = packageRoot();
    expect(modelsFolder(join(root, 'examples', 'claims'), defineApp(app()))).toBe(
      join(root, 'examples', 'claims', 'bpmn'),
    );
    // An app may name a folder outside its own (the default app names the top-level bpmn/, examples/work-orders/test
    // checks that): the camunda8 fixture app names test/fixtures/camunda8, and the check finds its models there.
    const checked = await checkApp({ app: 'test/fixtures/apps/camunda8', bpmnDir: null });
    expect(checked.modelsDir).toBe(join(root, 'test', 'fixtures', 'camunda8'));
    expect(checked.engine.processKeys.length).toBeGreaterThan(0);
    for (const models of ['../../..', '/etc/models', '../..'])
      expect(() => modelsFolder(join(root, 'examples', 'claims'), defineApp(app({ models })))).toThrow(
        new AppDefinitionError(
          `examples/claims/index.ts: models: ${JSON.stringify(models)} is no folder inside the repository; name one relative to the app's folder (e.g. bpmn)`,
        ),
      );
  });

  test('steps that do not match the models, and a message nobody declares: every problem in one line', async () => {
    const err: unknown = await checkApp({ app: 'test/fixtures/apps/mismatched', bpmnDir: null }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppDefinitionError);
    const text = (err as Error).message;
    expect(text.split('\n')).toHaveLength(1);
    expect(text).toMatch(/^test\/fixtures\/apps\/mismatched\/index\.ts: /);
    expect(text).toContain('task shipping/ship is async but steps has no handler ship');
    expect(text).toContain('steps has a handler shipp, but no model has an async task of that id');
    expect(text).toContain('shipping/waitForDelivery waits for message Delivered, which messages does not declare');
  });
});

describe('the build refuses what a start would', () => {
  test('`npm run build` (buildApp) checks the app before it bundles it: nothing is written for a refused one', async () => {
    const { existsSync } = await import('node:fs');
    const { appBundle } = await import('../../functions/src/apps/load-app');
    const { buildApp } = await import('../../tools/build/build-app');
    await expect(buildApp('test/fixtures/apps/mismatched')).rejects.toThrow(
      /^test\/fixtures\/apps\/mismatched\/index\.ts: task shipping\/ship is async but steps has no handler ship/,
    );
    expect(existsSync(appBundle('test/fixtures/apps/mismatched'))).toBe(false);
  });
});

describe('a model the engine cannot run', () => {
  test('is refused naming the app, the .bpmn file and the element', async () => {
    const err: unknown = await checkApp({
      app: 'test/fixtures/apps/mismatched',
      bpmnDir: 'test/fixtures/apps/unsupported-model',
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(
      /^test\/fixtures\/apps\/mismatched\/index\.ts: test\/fixtures\/apps\/unsupported-model\/manual\.bpmn: .*review/,
    );
  });
});

test("durationString: what a timer takes passes, anything else is refused with the timer's reason", async () => {
  const { durationString } = await import('../../functions/src/app');
  expect(durationString().safeParse('P10D').success).toBe(true);
  const bad = durationString().safeParse('P1M');
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]?.message).toMatch(/years or months/);
});
