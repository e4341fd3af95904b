/**
 * Tests of the emulator harness against the real gcloud emulators. These
 * start their own, independent emulator sets next to the ones of globalSetup.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import {
  EmulatorsUnavailableError,
  startEmulators,
  type EmulatorHandle,
  type RunningEmulators,
} from '../tools/emulators/harness';
import { firestoreAt } from './support/firestore';
import { connectResult } from './support/net';

// Each emulator needs a few seconds to start (a JVM each), more on busy CI machines.
jest.setTimeout(120_000);

const PROJECT = 'harness-test';

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is missing`);
  return value;
}

async function writeAndRead(host: string, docId: string): Promise<unknown> {
  const db = firestoreAt(host, PROJECT);
  try {
    const ref = db.collection('harness').doc(docId);
    await ref.set({ docId, n: 42 });
    return (await ref.get()).data();
  } finally {
    await db.terminate();
  }
}

function groupSignalError(pgid: number): string | undefined {
  try {
    process.kill(-pgid, 0);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

describe('emulator harness with the real emulators', () => {
  let firestoreSet: RunningEmulators | undefined;
  let pubsubSet: RunningEmulators | undefined;

  beforeAll(async () => {
    [firestoreSet, pubsubSet] = await Promise.all([
      startEmulators({ firestore: true, pubsub: false }),
      startEmulators({ firestore: false, pubsub: true }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([firestoreSet?.stop(), pubsubSet?.stop()]);
  });

  const firestore = (): EmulatorHandle => required(firestoreSet?.firestore, 'firestore handle');
  const pubsub = (): EmulatorHandle => required(pubsubSet?.pubsub, 'pubsub handle');

  it('starts only the requested emulators, on loopback ports of their own', () => {
    expect(firestoreSet?.pubsub).toBeUndefined();
    expect(pubsubSet?.firestore).toBeUndefined();
    expect(firestoreSet?.env).toEqual({ FIRESTORE_EMULATOR_HOST: firestore().host });
    expect(pubsubSet?.env).toEqual({ PUBSUB_EMULATOR_HOST: pubsub().host });
    expect(firestore().host).toMatch(/^127\.0\.0\.1:\d+$/);
    // Independent of the set globalSetup started (or reused).
    expect(firestore().host).not.toBe(process.env.FIRESTORE_EMULATOR_HOST);
    expect(pubsub().host).not.toBe(process.env.PUBSUB_EMULATOR_HOST);
    expect(fs.existsSync(firestore().logFile)).toBe(true);
  });

  it('Firestore: writes and reads a document', async () => {
    await expect(writeAndRead(firestore().host, 'first')).resolves.toEqual({ docId: 'first', n: 42 });
  });

  it('Pub/Sub: creates a topic', async () => {
    // apiEndpoint wins over PUBSUB_EMULATOR_HOST; a non-googleapis host switches the client to emulator mode.
    const client = new PubSub({ projectId: PROJECT, apiEndpoint: pubsub().host });
    try {
      const [topic] = await client.createTopic('harness-topic');
      expect(topic.name).toBe(`projects/${PROJECT}/topics/harness-topic`);
      const [topics] = await client.getTopics();
      expect(topics.map((t) => t.name)).toContain(topic.name);
    } finally {
      await client.close();
    }
  });

  it('restart() brings Firestore back on the same port and writes work again', async () => {
    const { host, pgid } = firestore();
    await firestore().restart();
    expect(firestore().host).toBe(host);
    expect(firestore().pgid).not.toBe(pgid);
    expect(groupSignalError(pgid)).toBe('ESRCH');
    await expect(writeAndRead(host, 'after-restart')).resolves.toEqual({ docId: 'after-restart', n: 42 });
  });

  it('restart({ keepDataOf }) exports that project before the stop and imports it at the start', async () => {
    const written = new Date('2026-11-30T01:02:03.456Z');
    const before = firestoreAt(firestore().host, PROJECT);
    try {
      await before
        .collection('kept')
        .doc('a')
        .set({ n: 7, at: written, nested: { list: [1, 'two'] } });
    } finally {
      await before.terminate();
    }
    const { pgid } = firestore();
    await firestore().restart({ keepDataOf: PROJECT, downMs: 200 });
    expect(groupSignalError(pgid)).toBe('ESRCH');
    const after = firestoreAt(firestore().host, PROJECT);
    try {
      const data = (await after.collection('kept').doc('a').get()).data();
      expect(data?.n).toBe(7);
      expect((data?.at as FirebaseFirestore.Timestamp).toDate()).toEqual(written);
      expect(data?.nested).toEqual({ list: [1, 'two'] });
    } finally {
      await after.terminate();
    }
  });

  it('stop() ends the process group and frees the port; stopping again is a no-op', async () => {
    const handles = [firestore(), pubsub()];
    await Promise.all([required(firestoreSet, 'set').stop(), required(pubsubSet, 'set').stop()]);
    for (const handle of handles) {
      expect(groupSignalError(handle.pgid)).toBe('ESRCH');
      await expect(connectResult(handle.host)).resolves.toBe('ECONNREFUSED');
    }
    await expect(Promise.all(handles.map((h) => h.stop()))).resolves.toBeDefined();
  });
});

describe('when the emulators cannot run here', () => {
  const savedPath = process.env.PATH;
  let binDir = '';

  beforeEach(() => {
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-gcloud-'));
  });

  afterEach(() => {
    process.env.PATH = savedPath;
    fs.rmSync(binDir, { recursive: true, force: true });
  });

  it('says what to install when gcloud is not on PATH', async () => {
    process.env.PATH = binDir; // empty directory
    const started = startEmulators();
    await expect(started).rejects.toBeInstanceOf(EmulatorsUnavailableError);
    await expect(started).rejects.toThrow(
      /gcloud.*not found on PATH[\s\S]*cloud-firestore-emulator[\s\S]*pubsub-emulator[\s\S]*beta[\s\S]*Java 17/,
    );
  });

  it.each([
    [
      'Java is missing',
      'ERROR: (gcloud.emulators.firestore.start) To use the Google Cloud Firestore emulator, a Java 8+ JRE must be installed and on your system PATH',
      /Java is missing/,
    ],
    [
      'a component is missing',
      'You need the [cloud-firestore-emulator] component to use the Google Cloud Firestore emulator.',
      /component is missing/,
    ],
  ])('recognises "%s" from the gcloud output', async (_case, output, reason) => {
    const fake = path.join(binDir, 'gcloud');
    fs.writeFileSync(fake, `#!/bin/sh\necho '${output}' >&2\nexit 1\n`, { mode: 0o755 });
    process.env.PATH = `${binDir}${path.delimiter}${savedPath ?? ''}`;
    const started = startEmulators({ firestore: true, pubsub: false, logDir: binDir });
    await expect(started).rejects.toBeInstanceOf(EmulatorsUnavailableError);
    await expect(started).rejects.toThrow(reason);
    await expect(started).rejects.toThrow(/gcloud components install cloud-firestore-emulator pubsub-emulator beta/);
  });
});
