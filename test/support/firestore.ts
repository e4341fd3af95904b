import { randomBytes } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';

/**
 * A Firestore client on the emulator, in a project of its own: every test
 * file (or test) gets isolated data without any switch in production code.
 */
export function isolatedFirestore(label: string): Firestore {
  if (process.env.FIRESTORE_EMULATOR_HOST === undefined) {
    throw new Error('FIRESTORE_EMULATOR_HOST is not set: run the tests through jest (its global setup starts the emulators)');
  }
  return new Firestore({ projectId: uniqueProjectId(label), ignoreUndefinedProperties: true });
}

/** A maker of {@link isolatedFirestore} clients for one test file; every client it made is terminated after the file's tests. */
export function freshFirestores(): (label: string) => Firestore {
  const made: Firestore[] = [];
  afterAll(async () => {
    await Promise.all(made.map((db) => db.terminate()));
  });
  return (label) => {
    const db = isolatedFirestore(label);
    made.push(db);
    return db;
  };
}

/** A project id unique to this call, valid for the emulators (lowercase, digits, dashes). */
export function uniqueProjectId(label: string): string {
  const slug = label.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 16).replace(/-+$/, '');
  return `t-${slug}-${randomBytes(4).toString('hex')}`;
}

/** Polls `check` until it returns a value other than undefined; no fixed sleeps in tests. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: string | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError === undefined ? '' : `: ${lastError}`}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A client aimed at an explicit emulator host (another emulator, or a dead
 * port for outage tests). The SDK reads FIRESTORE_EMULATOR_HOST in its
 * constructor and lets it win over settings, so it is swapped for that moment.
 */
export function firestoreAt(host: string, projectId: string): Firestore {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = host;
  try {
    return new Firestore({ projectId, ignoreUndefinedProperties: true });
  } finally {
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
  }
}
