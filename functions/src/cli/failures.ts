import { Socket } from 'node:net';
import { errorCode, errorMessage } from '../core/errors';

/**
 * The CLI's expected failures: each one line that says what to do, each with
 * its own exit code (docs/cli.md "Exit codes", docs/runbook.md "The operator CLI").
 */
export const EXIT = {
  OK: 0,
  /** Refused or failed: an unknown id, nothing to do, a technical error. */
  FAILED: 1,
  /** Bad usage: unknown command, bad flag value, bad configuration. */
  USAGE: 2,
  /** No Google credentials (application default credentials), or Google refused them. */
  NO_CREDENTIALS: 3,
  /** The project does not exist, has no Firestore database, or has the Firestore API off. */
  WRONG_PROJECT: 4,
  /** Firestore does not answer: the emulator at FIRESTORE_EMULATOR_HOST, or the network. */
  UNREACHABLE: 5,
  /** The credentials are fine but may not read or write the project's Firestore. */
  PERMISSION_DENIED: 6,
} as const;

/** An expected failure of the CLI: its exit code and the one line to print. */
export class CliFailure extends Error {
  override readonly name = 'CliFailure';
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where the CLI talks to, for the words of a failure. */
export interface Target {
  readonly projectId: string;
  /** FIRESTORE_EMULATOR_HOST, or null against the real project. */
  readonly emulatorHost: string | null;
}

const GRPC = {
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
  DEADLINE_EXCEEDED: 4,
} as const;

/** A library message as one line, without its own "14 UNAVAILABLE:" prefix repeated. */
const oneLine = (err: unknown): string => errorMessage(err).replace(/\s+/g, ' ').trim().slice(0, 300);

const LOGIN =
  'run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS to a service account key file)';

/** What google-auth-library says when it finds no credentials, as a CliFailure; null for anything else. */
export function credentialsFailure(err: unknown, target: Target, env: NodeJS.ProcessEnv): CliFailure | null {
  const message = oneLine(err);
  const keyFile = env.GOOGLE_APPLICATION_CREDENTIALS;
  if (/Could not load the default credentials/i.test(message)) {
    return new CliFailure(
      EXIT.NO_CREDENTIALS,
      `no Google credentials for project ${target.projectId} (no application default credentials found): ${LOGIN}; for the emulators set FIRESTORE_EMULATOR_HOST`,
    );
  }
  if (
    keyFile !== undefined &&
    keyFile !== '' &&
    (/does not exist, or it is not a file/i.test(message) ||
      /GOOGLE_APPLICATION_CREDENTIALS/.test(message) ||
      /JSON|Unexpected token|private_key|client_email/i.test(message))
  ) {
    return new CliFailure(
      EXIT.NO_CREDENTIALS,
      `GOOGLE_APPLICATION_CREDENTIALS=${keyFile} gives no credentials (${message}): point it at a service account key file, or unset it and run \`gcloud auth application-default login\``,
    );
  }
  if (
    /invalid_grant|invalid_rapt|reauth|Getting metadata from plugin failed|Could not refresh access token|UNAUTHENTICATED|invalid authentication credentials/i.test(
      message,
    )
  ) {
    return new CliFailure(
      EXIT.NO_CREDENTIALS,
      `Google refused the credentials for project ${target.projectId} (${message}): ${LOGIN} again`,
    );
  }
  return null;
}

/**
 * An error of a command, as the CLI's expected failure it is (credentials,
 * wrong project, unreachable, permission denied), or null: not one of them.
 */
export function classifyCliError(err: unknown, target: Target, env: NodeJS.ProcessEnv): CliFailure | null {
  if (err instanceof CliFailure) return err;
  const code = errorCode(err);
  const message = oneLine(err);
  const project = target.projectId;
  if (code === GRPC.UNAUTHENTICATED)
    return new CliFailure(
      EXIT.NO_CREDENTIALS,
      `Google refused the credentials for project ${project} (${message}): ${LOGIN} again`,
    );
  const credentials = credentialsFailure(err, target, env);
  if (credentials !== null) return credentials;
  if (code === GRPC.NOT_FOUND && /database|project/i.test(message)) {
    return new CliFailure(
      EXIT.WRONG_PROJECT,
      `project ${project} has no Firestore database, or does not exist (${message}): check GOOGLE_CLOUD_PROJECT (\`gcloud projects list\`), or create the database (infra/deploy.sh)`,
    );
  }
  if (code === GRPC.PERMISSION_DENIED) {
    // Google answers a project that does not exist, or whose Firestore API is off, with PERMISSION_DENIED too.
    if (
      /has not been used in project|is disabled|SERVICE_DISABLED|Permission denied on resource project|CONSUMER_INVALID|project .* not found/i.test(
        message,
      )
    ) {
      return new CliFailure(
        EXIT.WRONG_PROJECT,
        `project ${project} does not exist, or the Firestore API is not enabled in it (${message}): check GOOGLE_CLOUD_PROJECT (\`gcloud projects list\`), or set the project up (infra/deploy.sh)`,
      );
    }
    return new CliFailure(
      EXIT.PERMISSION_DENIED,
      `permission denied on project ${project} (${message}): the account of your credentials needs roles/datastore.user on ${project} (roles/datastore.viewer is enough for stats, list, show, explain, instances, incidents)`,
    );
  }
  // A query whose composite index is not (yet) built: the emulator needs none, production refuses the query.
  // New commands come with new indexes (`inbox waiting`, `inbox timers`), and an index takes minutes to build.
  if (code === GRPC.FAILED_PRECONDITION && /\bindex\b/i.test(message)) {
    return new CliFailure(
      EXIT.FAILED,
      `Firestore of project ${project} has no index for this query yet (${message}): deploy firestore.indexes.json (rerun infra/deploy.sh, or \`npm run firebase -- deploy --only firestore:indexes --project ${project}\`) and wait until \`gcloud firestore indexes composite list --project=${project}\` shows it READY`,
    );
  }
  if (code === GRPC.UNAVAILABLE || code === GRPC.DEADLINE_EXCEEDED || code === 'ECONNREFUSED') {
    return target.emulatorHost === null
      ? new CliFailure(
          EXIT.UNREACHABLE,
          `Firestore of project ${project} did not answer (${message}): check the network, then run the command again (\`inbox explain ID\` shows whether a change landed)`,
        )
      : new CliFailure(
          EXIT.UNREACHABLE,
          `the Firestore emulator at ${target.emulatorHost} (FIRESTORE_EMULATOR_HOST) stopped answering (${message}): start it again (\`npm run emulators\`) and rerun the command`,
        );
  }
  return null;
}

/** HOST:PORT (or [v6]:PORT) → host and port; null when it is not that. */
export function splitHostPort(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim());
  if (match === null) return null;
  const port = Number(match[3]);
  return port > 0 && port < 65_536 ? { host: match[1] ?? match[2] ?? '', port } : null;
}

/** Whether something accepts TCP connections at host:port within `timeoutMs`: null if so, else why not. */
export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (why: string | null): void => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message)),
    );
    socket.connect(port, host);
  });
}

/**
 * Before the first Firestore call: the expected failures that can be seen
 * up front, fast and with one line, instead of a minute of retries or a
 * library's stack trace. On the emulator: does anything listen at its host.
 * On a real project: are there credentials (google-auth-library's own
 * lookup, the same the Firestore client does; no network unless it has to
 * ask the metadata server).
 */
export async function preflight(target: Target, env: NodeJS.ProcessEnv, probeTimeoutMs = 3_000): Promise<void> {
  if (target.emulatorHost !== null) {
    const at = splitHostPort(target.emulatorHost);
    if (at === null)
      throw new CliFailure(
        EXIT.USAGE,
        `FIRESTORE_EMULATOR_HOST=${target.emulatorHost} is not HOST:PORT (e.g. 127.0.0.1:8080)`,
      );
    const why = await tcpProbe(at.host, at.port, probeTimeoutMs);
    if (why !== null) {
      throw new CliFailure(
        EXIT.UNREACHABLE,
        `no Firestore emulator answers at ${target.emulatorHost} (FIRESTORE_EMULATOR_HOST; ${why}): start it (\`npm run emulators\` prints its host), or unset FIRESTORE_EMULATOR_HOST to use project ${target.projectId}`,
      );
    }
    return;
  }
  const { GoogleAuth } = await import('google-auth-library');
  try {
    await new GoogleAuth({
      projectId: target.projectId,
      scopes: ['https://www.googleapis.com/auth/datastore'],
    }).getClient();
  } catch (err) {
    throw (
      credentialsFailure(err, target, env) ??
      new CliFailure(
        EXIT.NO_CREDENTIALS,
        `no usable Google credentials for project ${target.projectId} (${oneLine(err)}): ${LOGIN}`,
      )
    );
  }
}
