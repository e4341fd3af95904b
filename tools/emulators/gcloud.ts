import * as fs from 'node:fs';
import * as path from 'node:path';

/** The emulators the harness knows how to run. */
export type EmulatorName = 'firestore' | 'pubsub';

/** What to install when an emulator cannot run on this machine. */
export const INSTALL_HINT = [
  'Install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install) with the components',
  '`cloud-firestore-emulator`, `pubsub-emulator` and `beta`:',
  '  gcloud components install cloud-firestore-emulator pubsub-emulator beta',
  'or, for an apt-managed install on Debian/Ubuntu:',
  '  sudo apt-get install google-cloud-cli google-cloud-cli-firestore-emulator google-cloud-cli-pubsub-emulator',
  'and a Java 17+ JRE on PATH (e.g. `sudo apt-get install openjdk-17-jre-headless`; gcloud 528 warns that',
  'later releases of the Firestore emulator need Java 21+).',
].join('\n');

/**
 * Thrown when the emulators cannot run here at all (no gcloud, missing
 * component, no usable Java), as opposed to an emulator that started and
 * then failed. The message says what to install.
 */
export class EmulatorsUnavailableError extends Error {
  override readonly name = 'EmulatorsUnavailableError';
}

/** Project id passed to the Pub/Sub emulator; clients may use any project id. */
export const PUBSUB_PROJECT = 'emulator-harness';

/**
 * Full path of `command` on `searchPath` (default `process.env.PATH`),
 * or undefined if no executable of that name is found.
 */
export function findOnPath(command: string, searchPath: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/** The repository's Firestore security rules. */
export const FIRESTORE_RULES = path.join(__dirname, '..', '..', 'firestore.rules');

/**
 * gcloud arguments that start `name` on `host` ("127.0.0.1:PORT").
 * `dataDir` is required for Pub/Sub: it must exist (gcloud writes env.yaml
 * there and fails otherwise) and should be fresh so runs do not share state.
 */
export function gcloudArgs(name: EmulatorName, host: string, dataDir?: string): string[] {
  if (name === 'firestore') {
    // The project's security rules (deny all client access), so a rules test runs against what is deployed.
    // The server SDK authenticates to the emulator as owner and is not subject to rules, as in production.
    return ['emulators', 'firestore', 'start', `--host-port=${host}`, `--rules=${FIRESTORE_RULES}`];
  }
  if (dataDir === undefined) throw new Error('the Pub/Sub emulator needs a data dir');
  return [
    'beta',
    'emulators',
    'pubsub',
    'start',
    `--host-port=${host}`,
    `--data-dir=${dataDir}`,
    `--project=${PUBSUB_PROJECT}`,
  ];
}

/** Environment for gcloud: a missing component must fail, not prompt. */
export function gcloudEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' };
}

/** Log lines by which gcloud/the JVM say "cannot run here" (as of gcloud 528). */
const UNAVAILABLE_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /You need the \[[\w-]+\] component|requires the installation of components|components are required to run this command/,
    'a gcloud component is missing',
  ],
  [
    /managed by an external package manager/,
    'a gcloud component is missing (apt-managed gcloud cannot install it itself)',
  ],
  [
    /You do not currently have this command group installed|Invalid choice: '(beta|emulators|pubsub|firestore)'/,
    'the gcloud `beta` component or the emulator command is missing',
  ],
  [/No \w+ directory found|NoEmulatorError/, 'the emulator component files are missing'],
  [/JRE must be installed|Unable to execute the java|is not a Java \d+\+ JRE/, 'Java is missing or unusable'],
  [/UnsupportedClassVersionError/, 'the installed Java is too old for this emulator'],
];

/** Why the log says the emulator cannot run here, or undefined if it does not. */
export function unavailableReason(logText: string): string | undefined {
  for (const [pattern, reason] of UNAVAILABLE_PATTERNS) {
    if (pattern.test(logText)) return reason;
  }
  return undefined;
}

/**
 * True if the emulator failed to bind its port. The Pub/Sub JVM does not
 * exit in that case (it hangs), so the harness checks the log while waiting.
 */
export function portInUse(logText: string): boolean {
  return /BindException: Address already in use/.test(logText);
}
