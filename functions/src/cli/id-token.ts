/**
 * The ID token `inbox console` adds to what it forwards: gcloud's, for the
 * account signed in to gcloud, kept until shortly before it expires. The
 * source is a function, so tests sign their own.
 */
import { execFile } from 'node:child_process';

/** Gives a current ID token (a JWT); rejects with words that say what to do. */
export type IdTokenSource = () => Promise<string>;

/** Runs a program with arguments, never through a shell, and gives its standard output. */
export type RunFile = (file: string, args: readonly string[]) => Promise<string>;

/** How long gcloud may take to answer (a token refresh goes to Google). */
const GCLOUD_TIMEOUT_MS = 60_000;

/** Renew a token this long before it expires, so no request leaves with one about to lapse on the way. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** A failure of gcloud, in one line that says what to do. */
export class GcloudError extends Error {
  override readonly name = 'GcloudError';
}

/** {@link RunFile} with node's execFile: no shell, so nothing in an argument is ever a command. */
export const runFile: RunFile = (file, args) =>
  new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      { timeout: GCLOUD_TIMEOUT_MS, maxBuffer: 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          reject(
            new GcloudError(
              `${file} is not on PATH: install the Google Cloud SDK (https://cloud.google.com/sdk/docs/install) and sign in with \`gcloud auth login\``,
            ),
          );
          return;
        }
        const said =
          stderr
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l !== '')
            .slice(-3)
            .join(' ') || error.message;
        reject(new GcloudError(`\`${[file, ...args].join(' ')}\` failed: ${said}`));
      },
    );
  });

/** The claims of a JWT, unverified (the console verifies; this only reads when it expires and whose it is); null when it is no JWT. */
export function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** When a token expires, ms since the epoch; null when it says not. */
export function expiryOf(token: string): number | null {
  const exp = jwtClaims(token)?.exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null;
}

/**
 * gcloud's ID token of the active account: `gcloud auth print-identity-token`.
 * Its audience is gcloud's own OAuth client id (32555940559.apps.googleusercontent.com),
 * which Cloud Run IAM takes and INBOX_CONSOLE_AUDIENCES accepts by default.
 */
export function gcloudIdTokens(run: RunFile = runFile, gcloud = 'gcloud'): IdTokenSource {
  return async () => {
    let out: string;
    try {
      out = await run(gcloud, ['auth', 'print-identity-token']);
    } catch (err) {
      throw err instanceof GcloudError ? new GcloudError(`${err.message}; sign in with \`gcloud auth login\``) : err;
    }
    const token = out.trim();
    if (expiryOf(token) === null)
      throw new GcloudError(
        '`gcloud auth print-identity-token` printed no ID token: sign in with `gcloud auth login` (a user or service account, not only application default credentials)',
      );
    return token;
  };
}

/**
 * A source that asks `fetch` only when it has no token valid for more than
 * {@link REFRESH_MARGIN_MS}; one fetch at a time, shared by the requests
 * that wait for it. When a renewal fails while the old token is still
 * valid, the old one is used until it is not.
 */
export function cachedTokens(
  fetch: IdTokenSource,
  now: () => number = Date.now,
  marginMs = REFRESH_MARGIN_MS,
): IdTokenSource {
  let current: { readonly token: string; readonly expiresAt: number } | null = null;
  let pending: Promise<string> | null = null;
  const renew = async (): Promise<string> => {
    try {
      const token = await fetch();
      current = { token, expiresAt: expiryOf(token) ?? now() + marginMs };
      return token;
    } catch (err) {
      if (current !== null && current.expiresAt > now()) return current.token;
      throw err;
    }
  };
  return () => {
    if (current !== null && current.expiresAt - marginMs > now()) return Promise.resolve(current.token);
    // Cleared a microtask after it settles: always after this assignment, even when fetch throws at once.
    pending ??= renew().finally(() => {
      pending = null;
    });
    return pending;
  };
}
