/**
 * inboxConsole with iam access, served as deployed (dist/ under the
 * Functions Framework CLI, configured by its environment alone; needs
 * `npm run build`), against the Firestore emulator. Tokens are verified for
 * real by google-auth-library, against the keys of a local signer fetched
 * from a local certs server (INBOX_CONSOLE_OIDC_*), as Google's are in
 * production.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { createSigner, type TestSigner } from './tokens';
import { FIXTURE_ENV } from './app';

/** gcloud's OAuth client id: the audience of `gcloud auth print-identity-token` for a user account, which the console accepts by default. */
export const GCLOUD_CLIENT = '32555940559.apps.googleusercontent.com';

export interface IamConsole {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  readonly url: string;
  /** The issuer the console trusts (the certs server's URL). */
  readonly issuer: string;
  readonly signer: TestSigner;
  readonly served: ServedFunction;
  /** A valid ID token of `email`, as gcloud's for a user account (audience GCLOUD_CLIENT); `claims` override. */
  token(email: string, claims?: Record<string, unknown>): string;
  stop(): Promise<void>;
}

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

/** Serves inboxConsole for `projectId` with the lists INBOX_CONSOLE_VIEWERS and INBOX_CONSOLE_REPAIRERS as given. */
export async function serveIamConsole(
  projectId: string,
  lists: { readonly viewers: string; readonly repairers: string },
): Promise<IamConsole> {
  const signer = createSigner();
  const certs = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.setHeader('cache-control', 'public, max-age=300');
    res.end(JSON.stringify(signer.certs));
  });
  const issuer = await listen(certs);
  let served: ServedFunction;
  try {
    served = await serveFunction({
      target: 'inboxConsole',
      env: {
        ...FIXTURE_ENV,
        GOOGLE_CLOUD_PROJECT: projectId,
        INBOX_CONSOLE_OIDC_ISSUER: issuer,
        INBOX_CONSOLE_OIDC_CERTS_URL: `${issuer}/certs`,
        INBOX_CONSOLE_VIEWERS: lists.viewers,
        INBOX_CONSOLE_REPAIRERS: lists.repairers,
      },
    });
  } catch (err) {
    certs.close();
    throw err;
  }
  return {
    url: served.url.replace(/\/$/, ''),
    issuer,
    signer,
    served,
    token: (email, claims = {}) => signer.token({ iss: issuer, aud: GCLOUD_CLIENT, email, ...claims }),
    stop: async () => {
      await served.stop();
      await new Promise<void>((resolve) => certs.close(() => resolve()));
    },
  };
}
