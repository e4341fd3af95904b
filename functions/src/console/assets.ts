import { readFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';

/**
 * The page's files (the ui build's output, dist/console-page/): served by exact
 * name, never outside their folder, with a content type from a fixed list.
 * Only the page's kinds of file are served, so even a stray compiled module
 * beside them (server code, not page) is never sent.
 */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.eot': 'application/vnd.ms-fontobject',
};

/** A served file: its bytes and content type. */
export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** One path segment of a file name: no `..`, no hidden files, nothing a shell or a URL would read twice. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/**
 * The file a request path names under `root`, or null (404): `/` is
 * index.html; `/assets/NAME` and `/NAME` are NAME under `root` (the page
 * may refer to its files either way), subfolders allowed segment by
 * segment. `isServerModule` names the compiled modules beside the page
 * (a file Node has loaded), which are never served, nor their source maps.
 */
export async function readAsset(
  root: string,
  urlPath: string,
  isServerModule: (file: string) => boolean,
): Promise<Asset | null> {
  const relative = urlPath === '/' ? 'index.html' : urlPath.replace(/^\/assets\//, '').replace(/^\//, '');
  const segments = relative.split('/');
  if (segments.length > 4 || !segments.every((s) => SEGMENT.test(s) && !s.includes('..'))) return null;
  const contentType = CONTENT_TYPES[extname(relative).toLowerCase()];
  if (contentType === undefined) return null;
  const base = resolve(root);
  const file = resolve(join(base, ...segments));
  // Belt and braces: the segment rule already keeps the path inside.
  if (
    !file.startsWith(base + sep) ||
    isServerModule(file) ||
    (file.endsWith('.map') && isServerModule(file.slice(0, -'.map'.length)))
  )
    return null;
  try {
    return { body: await readFile(file), contentType };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
    throw err;
  }
}
