/**
 * A small stand-in for what infra/lib/storage.sh asks of Google, on
 * 127.0.0.1, so the real gcloud can run that section of the deploy: the
 * Cloud Storage JSON API's buckets (get, insert, patch, getIamPolicy,
 * setIamPolicy) and the IAM API's project roles (get, create, patch,
 * undelete). Buckets and roles live in memory; a test may put buckets in
 * first (a sender's, or one that drifted). Every other call gets a 404 and
 * is recorded in `unexpected`; an HTTPS CONNECT (a call meant for Google)
 * is refused and recorded. API calls must carry the fake access token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenStandIn } from './standin-server';

/** An IAM binding as the Storage API carries it. */
export interface StandInBinding {
  readonly role: string;
  readonly members: readonly string[];
}

/** A bucket as the JSON API describes it (the fields the deploy sets and reads). */
export type StandInBucket = Record<string, unknown> & { readonly name: string };

export interface StorageApiStandIn {
  /** Base URL for `api_endpoint_overrides` (ends with a slash). */
  readonly url: string;
  /** Buckets by name; the test may set one before the deploy runs. */
  readonly buckets: Map<string, StandInBucket>;
  /** Bucket IAM bindings by bucket name, as gcloud last set them. */
  readonly policies: ReadonlyMap<string, readonly StandInBinding[]>;
  /** Project roles by full name (projects/P/roles/ID). */
  readonly roles: Map<string, Record<string, unknown>>;
  /** Every call, "METHOD /path" (no query). */
  readonly calls: string[];
  /** Bodies of bucket inserts and patches, in order. */
  readonly writes: Array<{ readonly call: string; readonly body: Record<string, unknown> }>;
  readonly unexpected: readonly string[];
  close(): Promise<void>;
}

/** The Storage object permissions the stand-in calls testable on a project. */
const TESTABLE = [
  'storage.objects.create',
  'storage.objects.delete',
  'storage.objects.get',
  'storage.objects.list',
  'storage.objects.update',
];

export async function startStorageApiStandIn(accessToken: string): Promise<StorageApiStandIn> {
  const buckets = new Map<string, StandInBucket>();
  const policies = new Map<string, StandInBinding[]>();
  const roles = new Map<string, Record<string, unknown>>();
  const calls: string[] = [];
  const writes: Array<{ call: string; body: Record<string, unknown> }> = [];
  const unexpected: string[] = [];

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, code: number, message: string): void =>
    json(res, code, {
      error: { code, message, errors: [{ reason: code === 404 ? 'notFound' : 'conflict', message }] },
    });
  const parse = (body: Buffer): Record<string, unknown> =>
    body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as Record<string, unknown>);

  const route = (req: IncomingMessage, body: Buffer, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://standin');
    const path = url.pathname;
    const call = `${req.method ?? '?'} ${path}`;
    calls.push(call);
    if (req.headers.authorization !== `Bearer ${accessToken}`)
      return json(res, 401, { error: { code: 401, message: 'no or wrong access token' } });
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && path === '/storage/v1/b') {
      const sent = parse(body);
      const name = String(sent.name);
      writes.push({ call, body: sent });
      if (buckets.has(name)) return error(res, 409, `The requested bucket name is not available: ${name}`);
      const bucket: StandInBucket = {
        kind: 'storage#bucket',
        id: name,
        storageClass: 'STANDARD',
        metageneration: '1',
        timeCreated: '2026-01-01T00:00:00.000Z',
        updated: '2026-01-01T00:00:00.000Z',
        ...sent,
        name,
        location: (typeof sent.location === 'string' ? sent.location : 'US').toUpperCase(),
      };
      buckets.set(name, bucket);
      return json(res, 200, bucket);
    }
    if ((m = /^\/storage\/v1\/b\/([^/]+)\/iam$/.exec(path))) {
      const name = decodeURIComponent(m[1] ?? '');
      if (!buckets.has(name)) return error(res, 404, `The specified bucket does not exist: ${name}`);
      if (req.method === 'GET')
        return json(res, 200, {
          kind: 'storage#policy',
          resourceId: `projects/_/buckets/${name}`,
          version: 1,
          etag: 'CAE=',
          bindings: policies.get(name) ?? [],
        });
      if (req.method === 'PUT') {
        const policy = parse(body) as { bindings?: StandInBinding[] };
        policies.set(name, policy.bindings ?? []);
        return json(res, 200, { ...policy, etag: 'CAI=' });
      }
    }
    if ((m = /^\/storage\/v1\/b\/([^/]+)$/.exec(path))) {
      const name = decodeURIComponent(m[1] ?? '');
      const bucket = buckets.get(name);
      if (bucket === undefined) return error(res, 404, `The specified bucket does not exist: ${name}`);
      if (req.method === 'GET') return json(res, 200, bucket);
      if (req.method === 'PATCH') {
        const sent = parse(body);
        writes.push({ call, body: sent });
        const iamConfiguration = {
          ...(bucket.iamConfiguration as Record<string, unknown> | undefined),
          ...(sent.iamConfiguration as Record<string, unknown> | undefined),
        };
        const patched: StandInBucket = {
          ...bucket,
          ...sent,
          iamConfiguration,
          name,
          metageneration: String(Number(bucket.metageneration ?? 1) + 1),
        };
        buckets.set(name, patched);
        return json(res, 200, patched);
      }
    }
    // gcloud asks which permissions a custom role on the project may hold before it creates or updates one.
    if (req.method === 'POST' && path === '/v1/permissions:queryTestablePermissions') {
      return json(res, 200, {
        permissions: TESTABLE.map((name) => ({ name, stage: 'GA', customRolesSupportLevel: 'SUPPORTED' })),
      });
    }
    if (req.method === 'POST' && (m = /^\/v1\/(projects\/[^/]+)\/roles$/.exec(path))) {
      const sent = parse(body) as { roleId?: string; role?: Record<string, unknown> };
      const name = `${m[1] ?? ''}/roles/${sent.roleId ?? ''}`;
      if (roles.has(name)) return error(res, 409, `A role named ${sent.roleId ?? ''} in ${m[1] ?? ''} already exists.`);
      const role = { ...sent.role, name, etag: 'BwY=' };
      roles.set(name, role);
      return json(res, 200, role);
    }
    if ((m = /^\/v1\/(projects\/[^/]+\/roles\/[^/:]+)(:undelete)?$/.exec(path))) {
      const name = m[1] ?? '';
      const role = roles.get(name);
      if (role === undefined) return error(res, 404, `The role named ${name} was not found.`);
      if (req.method === 'GET') return json(res, 200, role);
      if (req.method === 'POST' && m[2] === ':undelete') {
        const undeleted = { ...role, deleted: false };
        roles.set(name, undeleted);
        return json(res, 200, undeleted);
      }
      if (req.method === 'PATCH') {
        const updated = { ...role, ...parse(body), name };
        roles.set(name, updated);
        return json(res, 200, updated);
      }
    }
    unexpected.push(call);
    error(res, 404, `${call} not found`);
  };

  const { server, url } = await listenStandIn(route, unexpected);
  return {
    url,
    buckets,
    policies,
    roles,
    calls,
    writes,
    unexpected,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((err) => (err === undefined ? resolve() : reject(err)))),
  };
}
