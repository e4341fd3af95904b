import { randomBytes } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';

/** Where a client of {@link freshFirestores} points. */
export interface FreshFirestoreOptions {
  /** The emulator to reach, e.g. a fault proxy in front of it; FIRESTORE_EMULATOR_HOST when absent. */
  readonly host?: string;
  /** A project made before (a second client on the same data); a new project named after the label when absent. */
  readonly projectId?: string;
}

/** A client of {@link freshFirestores} with its project's id, for what must reach the same data (the CLI, a child process, a second client). */
export interface FreshFirestore {
  readonly db: Firestore;
  readonly projectId: string;
}

/**
 * The emulator clients of one test file. Each client lives in a project of
 * its own unless told otherwise, so suites (or single tests, when each test
 * asks for a client) get isolated data without any switch in production code.
 */
export interface FreshFirestores {
  /** A client in a new project named after `label`. */
  (label: string, options?: FreshFirestoreOptions): Firestore;
  /** The same, with the project's id. */
  project(label: string, options?: FreshFirestoreOptions): FreshFirestore;
  /**
   * Runs `stop` after the file's tests, before the clients are terminated: for
   * servers and stacks that still use them. jest runs afterAll hooks in the
   * order they were declared, so a plain afterAll declared after
   * freshFirestores() would run once the clients are gone.
   */
  beforeTerminate(stop: () => Promise<void>): void;
}

/**
 * The one way a test file gets Firestore clients on the emulator: every
 * client it makes is terminated after the file's tests (one afterAll, declared
 * here), after what {@link FreshFirestores.beforeTerminate} was given.
 */
export function freshFirestores(): FreshFirestores {
  const made: Firestore[] = [];
  const stops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    try {
      for (const stop of stops) await stop();
    } finally {
      await Promise.all(made.map((db) => db.terminate()));
    }
  });
  const project = (label: string, options: FreshFirestoreOptions = {}): FreshFirestore => {
    const projectId = options.projectId ?? uniqueProjectId(label);
    const db = firestoreAt(options.host ?? emulatorHost(), projectId);
    made.push(db);
    return { db, projectId };
  };
  const client = (label: string, options?: FreshFirestoreOptions): Firestore => project(label, options).db;
  return Object.assign(client, {
    project,
    beforeTerminate: (stop: () => Promise<void>): void => {
      stops.push(stop);
    },
  });
}

function emulatorHost(): string {
  const host = process.env.FIRESTORE_EMULATOR_HOST;
  if (host === undefined || host === '') {
    throw new Error(
      'FIRESTORE_EMULATOR_HOST is not set: run the tests through jest (its global setup starts the emulators)',
    );
  }
  return host;
}

/** A project id unique to this call, valid for the emulators (lowercase, digits, dashes). */
export function uniqueProjectId(label: string): string {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 16)
    .replace(/-+$/, '');
  return `t-${slug}-${randomBytes(4).toString('hex')}`;
}

/**
 * A client aimed at an explicit emulator host (another emulator, or a dead
 * port for outage tests). The SDK reads FIRESTORE_EMULATOR_HOST in its
 * constructor and lets it win over settings, so it is swapped for that moment.
 * The caller terminates it; suites on the shared emulators use {@link freshFirestores}.
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
