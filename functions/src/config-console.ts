import { z } from 'zod';

/**
 * The settings of inboxConsole, beside config.ts (which spreads them into
 * DEFAULTS and its schema, and parses them once with the others).
 */
export const CONSOLE_DEFAULTS = {
  /**
   * How inboxConsole knows who calls: `iam`, a verified Google ID token
   * (Cloud Run IAM lets only run.invoker holders in; `inbox console` adds
   * the token), or `local`, no sign-in, loopback peers only (`npm start`;
   * refused on Cloud Run).
   */
  INBOX_CONSOLE_ACCESS: 'iam',
  /**
   * The `aud` claims inboxConsole accepts, comma-separated. gcloud's own
   * OAuth client id: the ID token of an account signed in to gcloud
   * (`gcloud auth print-identity-token`, which `inbox console` sends)
   * carries it as its audience (googlecloudsdk/core/config.py,
   * CLOUDSDK_CLIENT_ID). deploy.sh adds the
   * function's URL, the audience of a token minted for it (a service
   * account: `gcloud auth print-identity-token --audiences=URL`).
   */
  INBOX_CONSOLE_AUDIENCES: '32555940559.apps.googleusercontent.com',
  /** Issuer and keys of the console's ID tokens, as INBOX_TASKS_OIDC_* (tests sign their own). */
  INBOX_CONSOLE_OIDC_ISSUER: 'https://accounts.google.com',
  INBOX_CONSOLE_OIDC_CERTS_URL: 'https://www.googleapis.com/oauth2/v1/certs',
} as const;

/** inboxConsole: who may look and who may repair, and how callers are known (see {@link CONSOLE_DEFAULTS}). */
export interface ConsoleConfig {
  readonly access:
    | { readonly mode: 'local' }
    | {
        readonly mode: 'iam';
        readonly audiences: readonly string[];
        readonly oidc: { readonly issuer: string; readonly certsUrl: string };
      };
  /** INBOX_CONSOLE_VIEWERS: e-mails that may look (lower-cased). */
  readonly viewers: readonly string[];
  /** INBOX_CONSOLE_REPAIRERS: e-mails that may look and repair (lower-cased). */
  readonly repairers: readonly string[];
}

const commaList = z.string().transform((s) =>
  s
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0),
);

/** The console's variables in the environment schema; `certsUrl`: config.ts's rule for a key URL, with the console's default. */
export function consoleEnvFields<U extends z.ZodType>(certsUrl: U) {
  return {
    INBOX_CONSOLE_ACCESS: z.enum(['iam', 'local']).default(CONSOLE_DEFAULTS.INBOX_CONSOLE_ACCESS),
    INBOX_CONSOLE_AUDIENCES: commaList.pipe(z.array(z.string()).min(1, 'name at least one audience')).optional(),
    INBOX_CONSOLE_OIDC_ISSUER: z.string().min(1).default(CONSOLE_DEFAULTS.INBOX_CONSOLE_OIDC_ISSUER),
    INBOX_CONSOLE_OIDC_CERTS_URL: certsUrl,
    // Empty lists are allowed: the console then starts and refuses everybody (403), as a deployment without --console-* flags does.
    INBOX_CONSOLE_VIEWERS: commaList.pipe(z.array(z.email())).optional(),
    INBOX_CONSOLE_REPAIRERS: commaList.pipe(z.array(z.email())).optional(),
  };
}

/** The console's variables as parsed. */
export interface ConsoleEnv {
  readonly K_SERVICE?: string | undefined;
  readonly INBOX_CONSOLE_ACCESS: 'iam' | 'local';
  readonly INBOX_CONSOLE_AUDIENCES?: readonly string[] | undefined;
  readonly INBOX_CONSOLE_OIDC_ISSUER: string;
  readonly INBOX_CONSOLE_OIDC_CERTS_URL: string;
  readonly INBOX_CONSOLE_VIEWERS?: readonly string[] | undefined;
  readonly INBOX_CONSOLE_REPAIRERS?: readonly string[] | undefined;
}

/** The combinations the schema alone cannot refuse, each naming its variable. */
export function consoleIssues(e: ConsoleEnv): ReadonlyArray<{ readonly path: string; readonly message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  if (
    e.INBOX_CONSOLE_OIDC_ISSUER !== CONSOLE_DEFAULTS.INBOX_CONSOLE_OIDC_ISSUER &&
    e.INBOX_CONSOLE_OIDC_CERTS_URL === CONSOLE_DEFAULTS.INBOX_CONSOLE_OIDC_CERTS_URL
  ) {
    issues.push({
      path: 'INBOX_CONSOLE_OIDC_CERTS_URL',
      message: `set it to the keys of INBOX_CONSOLE_OIDC_ISSUER=${e.INBOX_CONSOLE_OIDC_ISSUER}; Google's keys sign only Google's tokens`,
    });
  }
  // No sign-in: on Cloud Run every request reaches the container from Google's front end, so the loopback check would mean nothing.
  if (e.INBOX_CONSOLE_ACCESS === 'local' && e.K_SERVICE !== undefined) {
    issues.push({
      path: 'INBOX_CONSOLE_ACCESS',
      message: `'local' is refused on Cloud Run (K_SERVICE=${e.K_SERVICE} is set): it is for \`npm start\` on this machine; deployed, the console takes 'iam' (the default)`,
    });
  }
  return issues;
}

export function consoleConfig(e: ConsoleEnv): ConsoleConfig {
  return {
    access:
      e.INBOX_CONSOLE_ACCESS === 'local'
        ? { mode: 'local' }
        : {
            mode: 'iam',
            audiences: e.INBOX_CONSOLE_AUDIENCES ?? [CONSOLE_DEFAULTS.INBOX_CONSOLE_AUDIENCES],
            oidc: { issuer: e.INBOX_CONSOLE_OIDC_ISSUER, certsUrl: e.INBOX_CONSOLE_OIDC_CERTS_URL },
          },
    viewers: (e.INBOX_CONSOLE_VIEWERS ?? []).map((m) => m.toLowerCase()),
    repairers: (e.INBOX_CONSOLE_REPAIRERS ?? []).map((m) => m.toLowerCase()),
  };
}
