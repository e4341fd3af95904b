import type { Certificates, OAuth2Client } from 'google-auth-library';
import { errorMessage } from '../core/errors';

/**
 * Verification of the OIDC token Pub/Sub attaches to push requests
 * (`Authorization: Bearer <jwt>`, signed by Google with RS256).
 */
export type AuthResult =
  | { readonly ok: true; readonly email: string }
  | { readonly ok: false; readonly status: 401 | 403; readonly reason: AuthFailure; readonly error: string };

/**
 * Which check refused a push token: a fixed word for logs and the
 * log-based metric inbox_push_rejections (label `reason`), so an alert can
 * tell a wrong audience after a URL change (WRONG_AUDIENCE) from a push
 * service account that is not allowed (ACCOUNT_NOT_ALLOWED) without parsing
 * the library's error text.
 */
export type AuthFailure =
  | 'MISSING_TOKEN'
  | 'NOT_RS256'
  | 'TOKEN_EXPIRED'
  | 'WRONG_AUDIENCE'
  | 'WRONG_ISSUER'
  | 'BAD_SIGNATURE'
  | 'INVALID_TOKEN'
  | 'EMAIL_NOT_VERIFIED'
  | 'ACCOUNT_NOT_ALLOWED';

/** Supplies the signing certificates; Google's by default (fetched and cached by google-auth-library). */
export type CertSource = () => Promise<Certificates>;

export interface PushTokenVerifierOptions {
  /** The audience configured on the push subscription (the endpoint URL by default). */
  readonly audience: string;
  /** Service accounts allowed to push (the subscription's push service account). */
  readonly allowedEmails: readonly string[];
  /** Where certificates come from. Tests pass locally generated keys. */
  readonly certs: CertSource;
  /** google-auth-library client that performs the signature and claim checks. */
  readonly client: OAuth2Client;
  /** Accepted `iss` claims; Google's by default. */
  readonly issuers?: readonly string[];
}

/** Who signs the tokens a verifier accepts, and where its public keys are (config: INBOX_TASKS_OIDC_*). */
export interface TokenIssuer {
  /** The `iss` claim; Google's is accepted in both of its spellings. */
  readonly issuer: string;
  /** A JSON map of key id to PEM, as Google's https://www.googleapis.com/oauth2/v1/certs. */
  readonly certsUrl: string;
}

export type PushTokenVerifier = (authorization: string | undefined) => Promise<AuthResult>;

const GOOGLE_ISSUERS: readonly string[] = ['accounts.google.com', 'https://accounts.google.com'];

function deny(status: 401 | 403, reason: AuthFailure, error: string): AuthResult {
  return { ok: false, status, reason, error };
}

/** The algorithm a JWT claims, without trusting anything else in it. */
function headerAlg(jwt: string): string | null {
  const [header] = jwt.split('.');
  try {
    const parsed: unknown = JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8'));
    const alg = typeof parsed === 'object' && parsed !== null ? (parsed as { alg?: unknown }).alg : undefined;
    return typeof alg === 'string' ? alg : null;
  } catch {
    return null;
  }
}

/** First clause of a library error, without the token it may quote. */
function reasonOf(err: unknown): string {
  const message = errorMessage(err);
  return message.split(/[:,]/)[0]?.slice(0, 100) ?? 'invalid token';
}

/**
 * google-auth-library's verifySignedJwtWithCertsAsync says which claim
 * failed only in its message (as of v10); anything not recognised here is
 * INVALID_TOKEN, still a 401.
 */
const LIBRARY_FAILURES: ReadonlyArray<readonly [RegExp, AuthFailure]> = [
  [/^Wrong recipient/, 'WRONG_AUDIENCE'],
  [/^Token used too (late|early)/, 'TOKEN_EXPIRED'],
  [/^Invalid issuer/, 'WRONG_ISSUER'],
  [/^(Invalid token signature|No pem found)/, 'BAD_SIGNATURE'],
];

function libraryFailure(clause: string): AuthFailure {
  return LIBRARY_FAILURES.find(([pattern]) => pattern.test(clause))?.[1] ?? 'INVALID_TOKEN';
}

/** What an ID token verifier needs: {@link PushTokenVerifierOptions} without the allow-list, and any number of audiences. */
export interface IdTokenVerifierOptions {
  /** Accepted `aud` claims: one of them must match. */
  readonly audience: string | readonly string[];
  readonly certs: CertSource;
  readonly client: OAuth2Client;
  /** Accepted `iss` claims; Google's by default. */
  readonly issuers?: readonly string[];
}

/**
 * Checks an ID token and says whose it is, not what they may do: signature
 * (RS256 only), issuer, expiry, audience and a verified e-mail. The push
 * endpoints add an allow-list of service accounts
 * ({@link createPushTokenVerifier}); the console maps the e-mail to a role.
 * Certificate fetch failures are thrown (technical: the caller answers 503);
 * every token problem is a 401, an unverified e-mail a 403.
 */
export function createIdTokenVerifier(options: IdTokenVerifierOptions): PushTokenVerifier {
  const audiences = typeof options.audience === 'string' ? [options.audience] : [...options.audience];
  return async (authorization) => {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    const jwt = match?.[1];
    if (jwt === undefined)
      return deny(401, 'MISSING_TOKEN', 'missing bearer token (Authorization: Bearer <OIDC token>)');
    // Google signs its ID tokens with RS256; refuse anything else (alg "none" included) up front.
    const alg = headerAlg(jwt);
    if (alg !== 'RS256') return deny(401, 'NOT_RS256', `token algorithm ${JSON.stringify(alg)} is not RS256`);

    const certs = await options.certs();
    let claims: Record<string, unknown>;
    try {
      const ticket = await options.client.verifySignedJwtWithCertsAsync(jwt, certs, audiences, [
        ...(options.issuers ?? GOOGLE_ISSUERS),
      ]);
      claims = (ticket.getPayload() ?? {}) as Record<string, unknown>;
    } catch (err) {
      const clause = reasonOf(err);
      return deny(401, libraryFailure(clause), `invalid token: ${clause}`);
    }
    const email = typeof claims['email'] === 'string' ? claims['email'] : '';
    if (claims['email_verified'] !== true) return deny(403, 'EMAIL_NOT_VERIFIED', 'token email is not verified');
    return { ok: true, email };
  };
}

/** A verifier that also refuses (403) a valid token of an account not in `allowedEmails` (case-insensitive). */
function allowOnly(identify: PushTokenVerifier, allowedEmails: readonly string[]): PushTokenVerifier {
  const allowed = new Set(allowedEmails.map((e) => e.toLowerCase()));
  return async (authorization) => {
    const result = await identify(authorization);
    if (!result.ok) return result;
    if (!allowed.has(result.email.toLowerCase()))
      return deny(403, 'ACCOUNT_NOT_ALLOWED', `service account ${result.email} may not push to this endpoint`);
    return result;
  };
}

/**
 * Builds the push verifier: {@link createIdTokenVerifier}'s checks, then a
 * valid token of a service account that may not push is a 403.
 */
export function createPushTokenVerifier(options: PushTokenVerifierOptions): PushTokenVerifier {
  return allowOnly(createIdTokenVerifier(options), options.allowedEmails);
}

/**
 * An ID token verifier on the issuer's keys, fetched and cached by
 * google-auth-library (as the response's Cache-Control allows). Without an
 * issuer, or with Google's, it checks Google's tokens against Google's keys.
 */
export async function googleIdTokenVerifier(
  audience: string | readonly string[],
  issuer?: TokenIssuer,
): Promise<PushTokenVerifier> {
  const { OAuth2Client } = await import('google-auth-library');
  const client = new OAuth2Client(
    issuer === undefined ? {} : { endpoints: { oauth2FederatedSignonPemCertsUrl: issuer.certsUrl } },
  );
  return createIdTokenVerifier({
    audience,
    client,
    issuers: issuer === undefined || GOOGLE_ISSUERS.includes(issuer.issuer) ? GOOGLE_ISSUERS : [issuer.issuer],
    certs: async () => (await client.getFederatedSignonCertsAsync()).certs,
  });
}

/** The production push verifier: {@link googleIdTokenVerifier}, then the allow-list of {@link createPushTokenVerifier}. */
export async function googlePushTokenVerifier(
  audience: string,
  allowedEmails: readonly string[],
  issuer?: TokenIssuer,
): Promise<PushTokenVerifier> {
  return allowOnly(await googleIdTokenVerifier(audience, issuer), allowedEmails);
}
