/**
 * The parts of firebase-tools 15 (lib/, CommonJS, no types shipped) that
 * test/infra/firebase-cli.test.ts calls: how `firebase` loads firebase.json,
 * and how `firebase deploy --only firestore` reads and sends
 * firestore.indexes.json. Shapes follow the compiled sources; only what the
 * test reads is declared.
 */

/** The options object the CLI builds from its flags (lib/command.js prepare), the fields these modules read. */
interface FirebaseCliOptions {
  cwd?: string;
  configPath?: string;
  project?: string;
  projectId?: string;
  only?: string;
  nonInteractive?: boolean;
  config?: import('firebase-tools/lib/config').Config;
  rc?: unknown;
}

/** A composite index or field override as firestore.indexes.json holds it. */
interface FirestoreIndexSpec {
  collectionGroup: string;
  queryScope?: string;
  fields: { fieldPath: string; order?: string; arrayConfig?: string }[];
}
interface FirestoreFieldOverrideSpec {
  collectionGroup: string;
  fieldPath: string;
  ttl?: unknown;
  indexes: { order?: string; arrayConfig?: string; queryScope?: string }[];
}

declare module 'firebase-tools/lib/config' {
  /** firebase.json as the CLI holds it (`options.config`). */
  export class Config {
    /** What Command.prepare calls: finds firebase.json from options.cwd upwards, validates it (debug log only) and loads it. */
    static load(options: FirebaseCliOptions, allowMissing?: boolean): Config | null;
    /** The file as read. */
    readonly src: Record<string, unknown>;
    readonly projectDir: string;
    /** A project-relative path made absolute (refused outside the project). */
    path(pathName: string): string;
  }
}

declare module 'firebase-tools/lib/firebaseConfigValidate' {
  /** An ajv error. */
  export interface ValidationError {
    keyword: string;
    instancePath: string;
    params: Record<string, unknown>;
    message?: string;
  }
  /** The ajv validator compiled from firebase-tools' schema/firebase-config.json. */
  export function getValidator(): ((data: unknown) => boolean) & { errors?: ValidationError[] | null };
  export function getErrorMessage(e: ValidationError): string;
}

declare module 'firebase-tools/lib/loadCJSON' {
  /** JSON with comments, as the CLI reads firebase.json and the indexes file. */
  export function loadCJSON(path: string): unknown;
}

declare module 'firebase-tools/lib/rc' {
  /** .firebaserc (aliases and targets); an empty one when the file is absent. */
  export function loadRC(options: FirebaseCliOptions): unknown;
}

declare module 'firebase-tools/lib/firestore/fsConfig' {
  /** The databases a deploy targets and the rules and indexes files of each. */
  export function getFirestoreConfig(
    projectId: string,
    options: FirebaseCliOptions,
  ): { database: string; rules?: string; indexes?: string }[];
}

declare module 'firebase-tools/lib/firestore/api' {
  /** The Firestore Admin API client `firebase deploy` uses for indexes and fields. */
  export class FirestoreApi {
    /** Normalises an indexes file (v1beta1 format, default queryScope). */
    upgradeOldSpec(spec: { indexes: unknown; fieldOverrides?: unknown }): {
      indexes: FirestoreIndexSpec[];
      fieldOverrides: FirestoreFieldOverrideSpec[];
    };
    /** Throws a FirebaseError naming the first invalid index or field override. */
    validateSpec(spec: { indexes: FirestoreIndexSpec[]; fieldOverrides: FirestoreFieldOverrideSpec[] }): void;
    /** PATCHes one field override (its index config, and its TTL when `ttl` is set) to FIRESTORE_URL. */
    patchField(project: string, spec: FirestoreFieldOverrideSpec, databaseId?: string): Promise<void>;
  }
}
