import { createSign, generateKeyPairSync } from 'node:crypto';

/**
 * Locally generated RS256 keys and OIDC tokens shaped like the ones Pub/Sub
 * push sends, so authentication is tested without Google's servers.
 */
export interface TestSigner {
  readonly kid: string;
  /** kid -> PEM public key, the shape google-auth-library verifies against. */
  readonly certs: Record<string, string>;
  token(claims?: Record<string, unknown>, header?: Record<string, unknown>): string;
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export function createSigner(kid = 'test-key-1'): TestSigner {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    kid,
    certs: { [kid]: pem },
    token(claims = {}, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      const head = b64url({ alg: 'RS256', typ: 'JWT', kid, ...header });
      const body = b64url({
        iss: 'https://accounts.google.com',
        aud: 'https://inbox.example.test/receivePubSubPush',
        email: 'pubsub-push@test-project.iam.gserviceaccount.com',
        email_verified: true,
        sub: '1234567890',
        iat: now,
        exp: now + 3600,
        ...claims,
      });
      const signature = createSign('RSA-SHA256').update(`${head}.${body}`).sign(privateKey).toString('base64url');
      return `${head}.${body}.${signature}`;
    },
  };
}

/** A token with `alg: none` and no signature. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
}
