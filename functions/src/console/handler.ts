import type { Request, Response } from '@google-cloud/functions-framework';
import { classifyFailure } from '../core/errors';
import { failureAnswer, RETRY_AFTER_SECONDS, send } from '../http/answer';
import type { Logger } from '../log';
import type { AppSummary, OperationsDeps } from '../operations/types';
import { type Access, refuseCloudRunProxy } from './access';
import { answerApi } from './api';
import { readAsset } from './assets';

/** What inboxConsole is built from (wiring.ts makes it from Config and Runtime). */
export interface ConsoleDeps {
  readonly ops: OperationsDeps;
  readonly access: Access;
  readonly accessMode: 'iam' | 'local';
  readonly projectId: string;
  /** The app the deployment runs: its name and message names (the page's filters offer them). */
  readonly app: () => AppSummary;
  /** The page's files: dist/console-page/ (the ui build). */
  readonly assetsDir: string;
  /** Whether a file is a server module (never served as a page file); default: one Node has loaded. */
  readonly isServerModule?: (file: string) => boolean;
  readonly log: Logger;
}

/**
 * Headers of every answer. The page loads only its own files
 * (bpmn-js bundled, no CDN), may not be framed (clickjacking of the repair
 * buttons) and sends no Referer (ids in the hash route stay here). Inline
 * styles are allowed: diagram-js positions its overlays with them.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // Answers name documents and their payloads: no shared cache keeps them; the page revalidates its files on each load (no content hash in their names).
  'Cache-Control': 'no-cache, private',
};

const loadedModule = (file: string): boolean => require.cache[file] !== undefined;

/**
 * inboxConsole: the page (GET / and its files) and the JSON API under
 * /api/. Local access checks the peer on every request; iam checks the
 * token on the API (the page holds no data; Cloud Run IAM lets only
 * invokers reach either). The API refuses whatever comes through `gcloud
 * run services proxy` first, in either mode. Every error is JSON.
 */
export function createConsoleHandler(deps: ConsoleDeps): (req: Request, res: Response) => Promise<void> {
  const isServerModule = deps.isServerModule ?? loadedModule;
  return async (req, res) => {
    res.set(SECURITY_HEADERS);
    try {
      const isApi = req.path === '/api' || req.path.startsWith('/api/');
      if (isApi || deps.accessMode === 'local') {
        const access = (isApi ? refuseCloudRunProxy(req) : null) ?? (await deps.access(req));
        if (!access.ok) {
          deps.log.warn('console: access refused', {
            path: req.path,
            method: req.method,
            reason: access.reason,
            status: access.answer.status,
          });
          send(res, access.answer);
          return;
        }
        if (isApi) {
          send(
            res,
            await answerApi(
              { ops: deps.ops, access: deps.accessMode, projectId: deps.projectId, app: deps.app, log: deps.log },
              req,
              access.caller,
            ),
          );
          return;
        }
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        send(res, { kind: 'reject', status: 405, error: 'the page takes GET; the API is under /api/', allow: ['GET'] });
        return;
      }
      const asset = await readAsset(deps.assetsDir, req.path, isServerModule);
      if (asset === null) {
        const hint = req.path === '/' ? ': the page is not built (npm run build writes dist/console-page/)' : '';
        send(res, { kind: 'reject', status: 404, error: `no such file ${req.path}${hint}` });
        return;
      }
      res.status(200).type(asset.contentType).send(asset.body);
    } catch (err) {
      // A certificate fetch, or the file system: nothing the caller did; a retry may heal it.
      const failure = classifyFailure(err);
      deps.log.error('console: unable to answer', { path: req.path, code: failure.code, err });
      send(res, failureAnswer(failure, 'answer', RETRY_AFTER_SECONDS));
    }
  };
}
