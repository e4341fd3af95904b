import fc from 'fast-check';
import type { AuthFailure } from '../../functions/src/auth/push-token';
import { type TestSigner, unsignedToken } from './tokens';

/**
 * The push-authentication matrix every Pub/Sub push endpoint must pass
 * (receivePubSubPush, receiveDeadLetter): one list, so both run the same
 * cases.
 */

/** The service account the push subscriptions use in the tests. */
export const PUSHER = 'pubsub-push@test-project.iam.gserviceaccount.com';

/** One request the endpoint must refuse, with the status and a part of the error it must answer. */
export interface AuthCase {
  readonly name: string;
  /** The Authorization header; undefined: none sent. */
  readonly authorization: string | undefined;
  readonly status: 401 | 403;
  readonly reason: string;
  /** The check's word the endpoint logs (`reason` of its `request rejected` line). */
  readonly failure: AuthFailure;
}

/**
 * Every way a push token can be wrong, for an endpoint whose verifier
 * expects `audience`. `stranger` shares `signer`'s key id but not its key,
 * so its tokens carry a forged signature.
 */
export function pushAuthCases(signer: TestSigner, stranger: TestSigner, audience: string): AuthCase[] {
  const now = Math.floor(Date.now() / 1000);
  const bearer = (
    claims: Record<string, unknown> = {},
    header: Record<string, unknown> = {},
    by: TestSigner = signer,
  ) => `Bearer ${by.token({ aud: audience, ...claims }, header)}`;
  return [
    {
      name: 'no Authorization header',
      authorization: undefined,
      status: 401,
      reason: 'missing bearer token',
      failure: 'MISSING_TOKEN',
    },
    {
      name: 'not a bearer token',
      authorization: 'Basic dXNlcjpwYXNz',
      status: 401,
      reason: 'missing bearer token',
      failure: 'MISSING_TOKEN',
    },
    {
      name: 'garbage bearer token',
      authorization: 'Bearer not.a.jwt',
      status: 401,
      reason: 'not RS256',
      failure: 'NOT_RS256',
    },
    {
      name: 'expired token',
      authorization: bearer({ iat: now - 7200, exp: now - 3600 }),
      status: 401,
      reason: 'Token used too late',
      failure: 'TOKEN_EXPIRED',
    },
    {
      name: 'wrong audience',
      authorization: bearer({ aud: 'https://elsewhere.example.test' }),
      status: 401,
      reason: 'Wrong recipient',
      failure: 'WRONG_AUDIENCE',
    },
    {
      name: 'wrong issuer',
      authorization: bearer({ iss: 'https://evil.example.test' }),
      status: 401,
      reason: 'Invalid issuer',
      failure: 'WRONG_ISSUER',
    },
    {
      name: 'bad signature',
      authorization: bearer({}, {}, stranger),
      status: 401,
      reason: 'Invalid token signature',
      failure: 'BAD_SIGNATURE',
    },
    {
      name: 'unknown key id',
      authorization: bearer({}, { kid: 'other-key' }),
      status: 401,
      reason: 'No pem found',
      failure: 'BAD_SIGNATURE',
    },
    {
      name: 'alg none',
      authorization: `Bearer ${unsignedToken({ iss: 'https://accounts.google.com', aud: audience, email: PUSHER, email_verified: true, iat: now, exp: now + 600 })}`,
      status: 401,
      reason: 'not RS256',
      failure: 'NOT_RS256',
    },
    {
      name: 'HS256 claimed in the header',
      authorization: bearer({}, { alg: 'HS256' }),
      status: 401,
      reason: 'not RS256',
      failure: 'NOT_RS256',
    },
    {
      name: 'wrong service account',
      authorization: bearer({ email: 'someone@else.iam.gserviceaccount.com' }),
      status: 403,
      reason: 'may not push',
      failure: 'ACCOUNT_NOT_ALLOWED',
    },
    {
      name: 'email not verified',
      authorization: bearer({ email_verified: false }),
      status: 403,
      reason: 'not verified',
      failure: 'EMAIL_NOT_VERIFIED',
    },
  ];
}

const b64url = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

/**
 * Forged Authorization headers, none of which carries a signature of the
 * signer's key: random text, bearer tokens with any header (RS256 or not,
 * any kid) and any claims (right audience and service account included) but
 * random signature bytes. Every one must be refused with a 401.
 */
export function forgedAuthorization(audience: string): fc.Arbitrary<string> {
  const claims = fc.record({
    iss: fc.constantFrom('https://accounts.google.com', 'accounts.google.com', 'evil'),
    aud: fc.constantFrom(audience, 'x'),
    email: fc.constantFrom(PUSHER, 'a@b'),
    email_verified: fc.boolean(),
    exp: fc.integer(),
  });
  const header = fc.record({
    alg: fc.constantFrom('RS256', 'none', 'HS256', 'ES256', ''),
    kid: fc.constantFrom('test-key-1', 'other', ''),
    typ: fc.constant('JWT'),
  });
  const jwt = fc
    .tuple(header, claims, fc.uint8Array({ maxLength: 300 }))
    .map(([h, c, sig]) => `Bearer ${b64url(h)}.${b64url(c)}.${Buffer.from(sig).toString('base64url')}`);
  return fc.oneof(
    printable,
    printable.map((t) => `Bearer ${t}`),
    jwt,
    fc.tuple(printable, printable, printable).map(([a, b, c]) => `Bearer ${b64url(a)}.${b64url(b)}.${b64url(c)}`),
  );
}
