import { createHash, generateKeyPairSync, sign as rsaSign, type KeyObject } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The OIDC tokens Cloud Tasks attaches to HTTP tasks that ask for one
 * (`httpRequest.oidcToken`), minted locally: an RSA key generated at start,
 * RS256 JWTs with Google's claims, and the public key served the way Google
 * serves its own, so an unmodified verifier (google-auth-library's
 * OAuth2Client) checks them once it is pointed at the emulator's URLs.
 */

/** The claims of a Google-signed ID token for a service account, as Cloud Tasks sends them. */
export interface OidcClaims {
  readonly iss: string;
  readonly aud: string;
  /** The service account's numeric unique id (Google sets azp and sub to it). */
  readonly azp: string;
  readonly sub: string;
  readonly email: string;
  readonly email_verified: true;
  /** Seconds since the epoch. */
  readonly iat: number;
  readonly exp: number;
}

/** What one token is for; the times are for tests that need a stale token signed by the real key. */
export interface TokenRequest {
  readonly serviceAccountEmail: string;
  readonly audience: string;
  /** Default: now. */
  readonly issuedAtMs?: number;
  /** Default 3600, the lifetime of Google's ID tokens. */
  readonly lifetimeSeconds?: number;
}

/** The emulator's token issuer. */
export interface OidcIssuer {
  /** The `iss` claim: by default the base URL of the key server, never Google's (a local token must not pass as one). */
  readonly issuer: string;
  /**
   * `{ kid: PEM public key }` at `/oauth2/v1/certs`: the shape of
   * https://www.googleapis.com/oauth2/v1/certs, which google-auth-library
   * fetches in Node (`endpoints.oauth2FederatedSignonPemCertsUrl`).
   */
  readonly certsUrl: string;
  /** The same key as a JWK Set at `/oauth2/v3/certs` (Google's https://www.googleapis.com/oauth2/v3/certs shape). */
  readonly jwksUrl: string;
  /** Key id in every token's header and in both key documents. */
  readonly kid: string;
  /** A signed token (RS256 JWT) with {@link OidcClaims}. */
  sign(request: TokenRequest): string;
  /** The claims {@link sign} puts in a token for `request`. */
  claims(request: TokenRequest): OidcClaims;
  close(): Promise<void>;
}

/** Options of {@link startOidcIssuer}. */
export interface OidcOptions {
  /** The `iss` claim. Default: the key server's base URL (`http://127.0.0.1:PORT`). */
  readonly issuer?: string;
  /** Port of the key server on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
}

const DEFAULT_LIFETIME_S = 3600;

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A stand-in for the service account's unique id: 21 digits, as Google's
 * are, derived from the email so a given account keeps its `sub`.
 */
export function uniqueIdOf(email: string): string {
  const n = createHash('sha256').update(email.toLowerCase()).digest().readBigUInt64BE();
  return `1${n.toString().padStart(20, '0')}`;
}

function keyDocuments(kid: string, publicKey: KeyObject): { pem: Record<string, string>; jwks: object } {
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    pem: { [kid]: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    jwks: { keys: [{ kty: jwk.kty, n: jwk.n, e: jwk.e, alg: 'RS256', use: 'sig', kid }] },
  };
}

/** Generates a key and serves it on 127.0.0.1; tokens are signed in process. */
export async function startOidcIssuer(options: OidcOptions = {}): Promise<OidcIssuer> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // Like Google's key ids: derived from the key, so a restarted emulator (a new key) never reuses one.
  const kid = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 40);
  const docs = keyDocuments(kid, publicKey);
  let issuer = options.issuer ?? '';
  let base = '';

  const server = http.createServer((req, res) => {
    const route = new URL(req.url ?? '/', 'http://localhost').pathname;
    const send = (status: number, body: unknown): void => {
      // No max-age: google-auth-library then fetches the keys for every check, so a verifier never
      // holds on to the key of an emulator that was restarted meanwhile (Google's keys rotate slowly; ours per start).
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { error: 'GET only' });
    if (route === '/oauth2/v1/certs') return send(200, docs.pem);
    if (route === '/oauth2/v3/certs') return send(200, docs.jwks);
    if (route === '/.well-known/openid-configuration') {
      return send(200, {
        issuer,
        jwks_uri: `${base}/oauth2/v3/certs`,
        id_token_signing_alg_values_supported: ['RS256'],
        subject_types_supported: ['public'],
        response_types_supported: ['id_token'],
      });
    }
    return send(404, {
      error: `no such document ${route}; the keys are at /oauth2/v1/certs (PEM) and /oauth2/v3/certs (JWKS)`,
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // An idle key server never keeps the host process alive (like the dispatcher's timers).
  server.unref();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (issuer === '') issuer = base;

  const claims = (request: TokenRequest): OidcClaims => {
    const iat = Math.floor((request.issuedAtMs ?? Date.now()) / 1000);
    const id = uniqueIdOf(request.serviceAccountEmail);
    return {
      iss: issuer,
      aud: request.audience,
      azp: id,
      sub: id,
      email: request.serviceAccountEmail,
      email_verified: true,
      iat,
      exp: iat + (request.lifetimeSeconds ?? DEFAULT_LIFETIME_S),
    };
  };
  return {
    issuer,
    certsUrl: `${base}/oauth2/v1/certs`,
    jwksUrl: `${base}/oauth2/v3/certs`,
    kid,
    claims,
    sign(request) {
      const signed = `${b64url({ alg: 'RS256', kid, typ: 'JWT' })}.${b64url(claims(request))}`;
      return `${signed}.${rsaSign('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
