/**
 * A small stand-in for the Google APIs that `gcloud functions deploy --gen2`
 * calls, on 127.0.0.1, so the real gcloud can run a deploy end to end with
 * no Google Cloud: the Cloud Functions v2 API (get, runtimes, the upload URL,
 * create/patch, operations), the signed upload URL itself (it keeps the zip),
 * Service Usage (gcloud asks whether run, cloudbuild and artifactregistry are
 * enabled), Resource Manager (the project number, read when a build service
 * account is given) and Cloud Run's IAM policy of the function's service (an
 * update with --no-allow-unauthenticated reads and writes it).
 *
 * gcloud reaches Cloud Run at a regional host it derives from the endpoint
 * override (REGION-<host>), which does not resolve; so the stand-in is also
 * gcloud's HTTP proxy: plain-HTTP requests for any host arrive here with the
 * absolute URL, and are routed by path like the rest. An HTTPS CONNECT (a
 * call meant for Google itself) is refused and recorded.
 *
 * It answers only what a deploy needs; every other call gets a 404 and is
 * recorded in `unexpected`, so a test can fail on calls it did not plan for.
 * API calls must carry the fake access token; the upload (a signed URL in
 * real life) must not need one.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenStandIn } from './standin-server';

/** The function as gcloud sent it in the create or patch request (the API's JSON). */
export interface SentFunction {
  readonly name: string;
  readonly buildConfig?: {
    readonly runtime?: string;
    readonly entryPoint?: string;
    readonly serviceAccount?: string;
    readonly source?: { readonly storageSource?: { readonly bucket: string; readonly object: string } };
  };
  readonly serviceConfig?: Readonly<Record<string, unknown>> & {
    readonly environmentVariables?: Readonly<Record<string, string>>;
  };
  readonly [field: string]: unknown;
}

export interface FunctionsApiStandIn {
  /** Base URL for `api_endpoint_overrides` (ends with a slash, as gcloud expects). */
  readonly url: string;
  /** Zips received on the upload URL, by object name. */
  readonly uploads: ReadonlyMap<string, Buffer>;
  /** Create/patch bodies by short function name, last one wins. */
  readonly sent: ReadonlyMap<string, SentFunction>;
  /** IAM policies gcloud set on Cloud Run services, by service resource name, last one wins. */
  readonly runPolicies: ReadonlyMap<
    string,
    { readonly bindings?: ReadonlyArray<{ readonly role: string; readonly members: readonly string[] }> }
  >;
  /** Every call, "METHOD /path". */
  readonly calls: readonly string[];
  /** Calls the stand-in does not know (answered 404). */
  readonly unexpected: readonly string[];
  /** The zip a function was deployed from (its storageSource), or undefined. */
  zipOf(functionName: string): Buffer | undefined;
  close(): Promise<void>;
}

export const STANDIN_PROJECT_NUMBER = '123456789012';

export async function startFunctionsApiStandIn(accessToken: string): Promise<FunctionsApiStandIn> {
  const uploads = new Map<string, Buffer>();
  const sent = new Map<string, SentFunction>();
  const runPolicies = new Map<string, { bindings?: Array<{ role: string; members: string[] }> }>();
  const stored = new Map<string, Record<string, unknown>>();
  const operations = new Map<string, Record<string, unknown>>();
  const calls: string[] = [];
  const unexpected: string[] = [];
  let base = '';

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse, what: string): void =>
    json(res, 404, { error: { code: 404, message: `${what} not found`, status: 'NOT_FOUND' } });

  /** A finished long-running operation whose response is the function, with the stages gcloud's progress tracker reads. */
  const finish = (fn: Record<string, unknown>): Record<string, unknown> => {
    const name = `${String(fn.name).replace(/\/functions\/.*$/, '')}/operations/op-${randomUUID()}`;
    const op = {
      name,
      done: true,
      metadata: {
        '@type': 'type.googleapis.com/google.cloud.functions.v2.OperationMetadata',
        stages: ['BUILD', 'SERVICE'].map((stage) => ({ name: stage, state: 'COMPLETE' })),
      },
      response: { '@type': 'type.googleapis.com/google.cloud.functions.v2.Function', ...fn },
    };
    operations.set(name, op);
    return op;
  };

  const accept = (body: Buffer, res: ServerResponse, fnName: string, shortName: string): void => {
    const fn = JSON.parse(body.toString('utf8')) as SentFunction;
    const object = fn.buildConfig?.source?.storageSource?.object;
    if (object !== undefined && !uploads.has(object))
      return json(res, 400, {
        error: { code: 400, message: `source ${object} was never uploaded`, status: 'INVALID_ARGUMENT' },
      });
    sent.set(shortName, fn);
    const location = fnName.replace(/\/functions\/.*$/, '');
    const serviceConfig = {
      ...fn.serviceConfig,
      uri: `https://${shortName.toLowerCase()}-standin-ew.a.run.app`,
      service: `${location}/services/${shortName.toLowerCase()}`,
    };
    const full = { ...fn, name: fnName, environment: 'GEN_2', state: 'ACTIVE', serviceConfig };
    stored.set(fnName, full);
    json(res, 200, finish(full));
  };

  const route = (req: IncomingMessage, body: Buffer, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://standin');
    const path = url.pathname;
    const call = `${req.method ?? '?'} ${path}`;
    calls.push(call);
    if (req.method === 'PUT' && path.startsWith('/upload/')) {
      if (req.headers['content-type'] !== 'application/zip')
        return json(res, 400, { error: { message: 'content-type must be application/zip' } });
      uploads.set(path.slice('/upload/'.length), body);
      return json(res, 200, {});
    }
    if (req.headers.authorization !== `Bearer ${accessToken}`)
      return json(res, 401, { error: { code: 401, message: 'no or wrong access token', status: 'UNAUTHENTICATED' } });
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && (m = /^\/v1\/projects\/([^/]+)\/services\/([^/]+)$/.exec(path)))
      return json(res, 200, { name: `projects/${STANDIN_PROJECT_NUMBER}/services/${m[2] ?? ''}`, state: 'ENABLED' });
    if (req.method === 'GET' && (m = /^\/v1\/projects\/([^/]+)$/.exec(path)))
      return json(res, 200, { projectId: m[1], projectNumber: STANDIN_PROJECT_NUMBER, lifecycleState: 'ACTIVE' });
    if (req.method === 'GET' && /^\/v2\/projects\/[^/]+\/locations\/[^/]+\/runtimes$/.test(path)) {
      return json(res, 200, {
        runtimes: [{ name: 'nodejs22', displayName: 'Node.js 22', stage: 'GA', environment: 'GEN_2' }],
      });
    }
    if (req.method === 'POST' && /^\/v2\/projects\/[^/]+\/locations\/[^/]+\/functions:generateUploadUrl$/.test(path)) {
      const object = `${randomUUID()}.zip`;
      return json(res, 200, {
        uploadUrl: `${base}upload/${object}`,
        storageSource: { bucket: `gcf-v2-uploads-${STANDIN_PROJECT_NUMBER}-standin`, object },
      });
    }
    if (req.method === 'POST' && (m = /^\/v2\/(projects\/[^/]+\/locations\/[^/]+)\/functions$/.exec(path))) {
      const id = url.searchParams.get('functionId') ?? '';
      return accept(body, res, `${m[1] ?? ''}/functions/${id}`, id);
    }
    if ((m = /^\/v2\/(projects\/[^/]+\/locations\/[^/]+\/functions\/([^/:]+))$/.exec(path))) {
      const name = m[1] ?? '';
      if (req.method === 'GET') {
        const fn = stored.get(name);
        return fn === undefined ? notFound(res, name) : json(res, 200, fn);
      }
      if (req.method === 'PATCH') return accept(body, res, name, m[2] ?? '');
    }
    if ((m = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/services\/[^/:]+):(getIamPolicy|setIamPolicy)$/.exec(path))) {
      const resource = m[1] ?? '';
      if (m[2] === 'getIamPolicy') return json(res, 200, runPolicies.get(resource) ?? { etag: 'BwY=' });
      const policy = (
        JSON.parse(body.toString('utf8')) as { policy: { bindings?: Array<{ role: string; members: string[] }> } }
      ).policy;
      runPolicies.set(resource, policy);
      return json(res, 200, policy);
    }
    if (req.method === 'GET' && (m = /^\/v2\/(projects\/[^/]+\/locations\/[^/]+\/operations\/[^/]+)$/.exec(path))) {
      const op = operations.get(m[1] ?? '');
      return op === undefined ? notFound(res, path) : json(res, 200, op);
    }
    unexpected.push(call);
    notFound(res, call);
  };

  const { server, url } = await listenStandIn(route, unexpected);
  base = url;

  return {
    url: base,
    uploads,
    sent,
    runPolicies,
    calls,
    unexpected,
    zipOf: (fn) => {
      const object = sent.get(fn)?.buildConfig?.source?.storageSource?.object;
      return object === undefined ? undefined : uploads.get(object);
    },
    close: () =>
      new Promise<void>((resolve, reject) => server.close((err) => (err === undefined ? resolve() : reject(err)))),
  };
}
