import type { Request } from '@google-cloud/functions-framework';
import type { PushTokenVerifier } from '../auth/push-token';
import type { ConsoleConfig } from '../config-console';
import type { Rejection } from '../http/answer';
import { localRefusal, LOOPBACK_NAMES } from '../http/loopback';
import type { Role } from '../operations/types';

/**
 * Who calls the console, and what they may do. Identity comes only from a
 * verified ID token (iam) or from the socket (local), never from a header a
 * client can set; the role from INBOX_CONSOLE_REPAIRERS / _VIEWERS.
 */
export interface Caller {
  /** The verified e-mail (iam), or {@link LOCAL_OPERATOR}. */
  readonly id: string;
  readonly role: Role;
}

/** A caller, or the 401/403 that refuses the request and a word for the log. */
export type AccessResult =
  | { readonly ok: true; readonly caller: Caller }
  | { readonly ok: false; readonly answer: Rejection; readonly reason: string };

/** Checks one request's caller. */
export type Access = (req: Request) => Promise<AccessResult>;

/** The actor of every repair made through a local console (`npm start`): nobody signs in there. */
export const LOCAL_OPERATOR = 'local operator';

/** A role from the configured lists (e-mails compared lower-cased); repairers may view; null: on neither list. */
export function roleOf(email: string, config: Pick<ConsoleConfig, 'viewers' | 'repairers'>): Role | null {
  const id = email.toLowerCase();
  if (config.repairers.includes(id)) return 'repairer';
  if (config.viewers.includes(id)) return 'viewer';
  return null;
}

/**
 * The token Cloud Run's IAM check took: X-Serverless-Authorization when
 * present (Cloud Run prefers it, and `inbox console` sends its token
 * there), else Authorization.
 */
function bearerOf(req: Request): string | undefined {
  return req.get('x-serverless-authorization') ?? req.get('authorization');
}

/**
 * The check of a state-changing request (POST /api/repairs) against
 * cross-site requests. Through `inbox console` the browser's requests
 * carry no credentials of their own: its proxy adds the token to whatever
 * reaches its loopback port under a loopback name, so a foreign page must
 * not be able to post there. A custom header (X-Inbox-Console) and a JSON content type cannot
 * be sent cross-origin without a CORS preflight, which the console never
 * grants; Sec-Fetch-Site, when the browser sends it, must say same-origin;
 * and Origin, when sent, must be a loopback name (the proxy, `npm start`) or
 * the Host the request was addressed to (a direct call), which also stops a
 * rebound DNS name. null: allowed.
 */
export function crossSiteRefusal(req: Request): Rejection | null {
  const refuse = (error: string): Rejection => ({ kind: 'reject', status: 403, error });
  if (req.get('x-inbox-console') !== '1')
    return refuse('repairs need the header X-Inbox-Console: 1 (the console page sends it; a cross-site form cannot)');
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    return refuse(`repairs are accepted from the console's own page only (Sec-Fetch-Site: ${site})`);
  const origin = req.get('origin');
  if (origin !== undefined) {
    const name = URL.canParse(origin) ? new URL(origin).host.toLowerCase() : null;
    const fromLoopback = name !== null && LOOPBACK_NAMES.has(new URL(origin).hostname.toLowerCase());
    if (!fromLoopback && name !== (req.get('host') ?? '').toLowerCase())
      return refuse(`repairs are accepted from the console's own page only (Origin: ${origin})`);
  }
  if (req.is('application/json') !== 'application/json')
    return { kind: 'reject', status: 415, error: 'repairs take Content-Type: application/json' };
  return null;
}

/** The User-Agent that cloud-run-proxy, the binary behind `gcloud run services proxy`, puts first on every request it forwards. */
const CLOUD_RUN_PROXY_AGENT = /^\s*cloud-run-proxy\//i;

/**
 * The refusal of a request that came through `gcloud run services proxy`
 * (its cloud-run-proxy binary: github.com/GoogleCloudPlatform/cloud-run-proxy).
 * That proxy listens on 127.0.0.1, sets Host to the service's own host and
 * adds the operator's ID token to every request whatever its Host, so the
 * console cannot tell the operator's page from a page of another site whose
 * DNS name was rebound to 127.0.0.1: same-origin with itself, that page can
 * read everything the token may. What the proxy always leaves is its
 * User-Agent, prepended to the browser's (gcloud has no flag to turn it
 * off). `inbox console` is the proxy to use: it refuses any Host but a
 * loopback name. null: not through cloud-run-proxy.
 */
export function cloudRunProxyRefusal(userAgent: string | undefined): string | null {
  if (userAgent === undefined || !CLOUD_RUN_PROXY_AGENT.test(userAgent)) return null;
  return (
    'the console refuses requests through `gcloud run services proxy` (User-Agent cloud-run-proxy/…): that proxy signs every request that reaches its port ' +
    'with your token, whatever page sent it, so a web page that rebinds its DNS name to 127.0.0.1 could read the console through it. ' +
    'Stop it and run `inbox console --service inboxconsole --region REGION` instead (docs/runbook.md, "The console")'
  );
}

/** The access result of a request refused with a 403, its reason for the log. */
const refused = (reason: string, error: string): AccessResult => ({
  ok: false,
  reason,
  answer: { kind: 'reject', status: 403, error },
});

/**
 * The refusal of an API request through `gcloud run services proxy`
 * ({@link cloudRunProxyRefusal}), in either access mode, before any token
 * is looked at; null: not through it. Only the API: the page holds no data,
 * so it still loads and shows the refusal's words.
 */
export function refuseCloudRunProxy(req: Request): AccessResult | null {
  const why = cloudRunProxyRefusal(req.get('user-agent'));
  return why === null ? null : refused('CLOUD_RUN_PROXY', why);
}

/**
 * The console's access check from its configuration. iam: `verifier` checks
 * the ID token (signature, issuer, expiry, an audience of
 * INBOX_CONSOLE_AUDIENCES, a verified e-mail); no valid token is a 401, a
 * valid one of an e-mail on neither list a 403. local: loopback peers only
 * ({@link localRefusal}), everyone a repairer as {@link LOCAL_OPERATOR}.
 */
export function createAccess(config: ConsoleConfig, verifier: () => Promise<PushTokenVerifier>): Access {
  if (config.access.mode === 'local') {
    return async (req) => {
      const why = localRefusal(req.socket.remoteAddress, req.get('host'));
      return why === null
        ? { ok: true, caller: { id: LOCAL_OPERATOR, role: 'repairer' } }
        : refused('NOT_LOOPBACK', why);
    };
  }
  return async (req) => {
    const auth = await (await verifier())(bearerOf(req));
    if (!auth.ok)
      return { ok: false, reason: auth.reason, answer: { kind: 'reject', status: auth.status, error: auth.error } };
    const role = roleOf(auth.email, config);
    if (role === null) {
      return {
        ok: false,
        reason: 'NOT_LISTED',
        answer: {
          kind: 'reject',
          status: 403,
          error: `${auth.email} may not use this console: it is on neither INBOX_CONSOLE_VIEWERS nor INBOX_CONSOLE_REPAIRERS (deploy.sh --console-viewers / --console-repairers)`,
          details: { id: auth.email },
        },
      };
    }
    return { ok: true, caller: { id: auth.email, role } };
  };
}
