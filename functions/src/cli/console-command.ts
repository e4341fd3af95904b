/**
 * `inbox console [--port N] (--url URL | --service NAME --region R)`: opens
 * the deployed console on http://127.0.0.1:PORT/ through the proxy of
 * console-proxy.ts, signed with gcloud's ID token, until interrupted.
 */
import { errorMessage } from '../core/errors';
import { isLoopbackHost } from '../http/loopback';
import { startConsoleProxy } from './console-proxy';
import { CliFailure, EXIT } from './failures';
import { cachedTokens, gcloudIdTokens, type IdTokenSource, jwtClaims, runFile, type RunFile } from './id-token';
import { UsageError } from './parse';

/** Where the command writes: the CLI's io (its own type here keeps this module apart from the CLI's runtime). */
export interface ConsoleIo {
  out(text: string): void;
  err(text: string): void;
}

export interface ConsoleOptions {
  readonly port?: string;
  readonly url?: string;
  readonly service?: string;
  readonly region?: string;
  readonly project?: string;
}

/** What the command runs with besides its flags; tests give their own. */
export interface ConsoleCommandDeps {
  /** Runs gcloud (default: execFile, no shell). */
  readonly run?: RunFile;
  /** The ID tokens (default: `gcloud auth print-identity-token`, renewed before they expire). */
  readonly tokens?: IdTokenSource;
  /** Resolves when the proxy should stop (default: SIGINT or SIGTERM). */
  readonly until?: Promise<void>;
  /** Called once the proxy listens, with its URL. */
  readonly onListening?: (url: string) => void;
}

export const DEFAULT_CONSOLE_PORT = 8080;

/** --port: a whole number from 0 (any free port) to 65535. */
export function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_CONSOLE_PORT;
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isInteger(n) || n > 65_535)
    throw new UsageError(`--port: expected a port from 0 (any free one) to 65535, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * --url: the console's address. https, since the token it is sent with
 * lets its holder act as the operator; plain http only to this machine
 * (the local stack, tests).
 */
export function parseConsoleUrl(text: string): URL {
  if (!URL.canParse(text))
    throw new UsageError(
      `--url: expected the console's URL (https://inboxconsole-….run.app), got ${JSON.stringify(text)}`,
    );
  const url = new URL(text);
  const local = url.protocol === 'http:' && isLoopbackHost(url.host);
  if (url.protocol !== 'https:' && !local)
    throw new UsageError(
      `--url: expected an https:// URL (the ID token must not cross the network in clear; http:// only to 127.0.0.1 or localhost), got ${JSON.stringify(text)}`,
    );
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw new UsageError(`--url: expected a URL without credentials, query or fragment, got ${JSON.stringify(text)}`);
  return url;
}

/** The service's URL: --url, or what `gcloud run services describe` says of --service in --region. */
async function targetOf(options: ConsoleOptions, run: RunFile): Promise<URL> {
  if (options.url !== undefined) {
    if (options.service !== undefined) throw new UsageError('give either --url or --service (with --region), not both');
    return parseConsoleUrl(options.url);
  }
  if (options.service === undefined || options.region === undefined) {
    throw new UsageError(
      'say which console: --service inboxconsole --region REGION (the Cloud Run service of the inboxConsole function), or --url URL',
    );
  }
  const args = [
    'run',
    'services',
    'describe',
    options.service,
    `--region=${options.region}`,
    '--format=value(status.url)',
    ...(options.project === undefined ? [] : [`--project=${options.project}`]),
  ];
  const url = (await run('gcloud', args)).trim();
  if (url === '')
    throw new UsageError(
      `gcloud gives no URL for service ${options.service} in ${options.region}: is it deployed there (infra/deploy.sh)?`,
    );
  return parseConsoleUrl(url);
}

/** Until the first SIGINT or SIGTERM. */
function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * Runs the proxy until `deps.until`. The first token is asked for before
 * it listens, so a gcloud that is missing or signed out fails at once, in
 * one line, instead of on the first page load.
 */
export async function consoleCommand(
  io: ConsoleIo,
  options: ConsoleOptions,
  deps: ConsoleCommandDeps = {},
): Promise<void> {
  const port = parsePort(options.port);
  const run = deps.run ?? runFile;
  const target = await targetOf(options, run);
  const tokens = deps.tokens ?? cachedTokens(gcloudIdTokens(run));
  const first = await tokens().catch((err: unknown) => {
    throw new CliFailure(EXIT.NO_CREDENTIALS, `no ID token for the console: ${errorMessage(err)}`);
  });
  const email = jwtClaims(first)?.email;
  const proxy = await startConsoleProxy({ target, port, tokens, log: (line) => io.err(line) });
  try {
    io.out(
      `inbox console: open ${proxy.url} (proxies to ${target.origin}${typeof email === 'string' ? ` as ${email}` : ''}; only this machine, only under 127.0.0.1 or localhost; Ctrl-C stops it)`,
    );
    deps.onListening?.(proxy.url);
    await (deps.until ?? untilInterrupted());
  } finally {
    await proxy.close();
  }
}
