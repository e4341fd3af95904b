/**
 * `inbox model check PATH... [--json]`: what a modeller runs before a deploy.
 * Each `.bpmn` file (PATH: files, or folders searched for `*.bpmn` below them)
 * is read as a deploy reads it (UTF-8) and parsed as a deploy parses it: one
 * line per file, `loads` with its process key or the refusal with the
 * element's id, its kind and what to do; `--json` an array of the same. Exit
 * 0 when every file loads, 1 when any is refused, 2 for bad usage (a path
 * that does not exist, a folder without a `.bpmn` file). Needs no project and
 * no Firestore. Nothing a file holds stops the run: a file over 5 MiB or not
 * a regular file (a FIFO, a device) is refused unread, and whatever the
 * parser throws is that file's refusal.
 */
import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { errorCode, errorMessage } from '../core/errors';
import { CliFailure, EXIT } from './failures';
import {
  checkLine,
  noteLines,
  checkModelXml,
  checkViews,
  MAX_MODEL_BYTES,
  type ModelCheck,
  refusedFile,
  summaryLine,
  unexpectedVerdict,
} from './model-check';
import { UsageError } from './parse';

/** Where the command writes: the CLI's io (its own type here keeps this module apart from the CLI's runtime). */
export interface ModelCheckIo {
  out(text: string): void;
}

/** Folders a search does not enter: installed packages and hidden folders (`.git`). */
const SKIPPED_FOLDER = (name: string): boolean => name === 'node_modules' || name.startsWith('.');

/** A file to check, or a folder of the search that could not be read (refused as such). */
interface Found {
  readonly file: string;
  readonly unreadable?: string;
}

/** The `*.bpmn` files below a folder, sorted by name at each level; symbolic links to folders are not followed (no loops). */
async function search(folder: string): Promise<Found[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (err) {
    return [{ file: folder, unreadable: `this folder cannot be read (${errorCode(err) ?? errorMessage(err)})` }];
  }
  const found: Found[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDER(entry.name)) found.push(...(await search(path)));
    } else if (entry.name.endsWith('.bpmn')) {
      found.push({ file: path });
    }
  }
  return found;
}

/**
 * The files the paths name, each once, in the order given (a folder's in its
 * search order). A path that does not exist, or a folder without a `.bpmn`
 * file, is a usage error: nothing is checked.
 */
export async function modelFiles(paths: readonly string[]): Promise<Found[]> {
  const found: Found[] = [];
  for (const path of paths) {
    let stats;
    try {
      stats = await stat(path);
    } catch (err) {
      const code = errorCode(err);
      throw new UsageError(
        code === 'ENOENT' || code === 'ENOTDIR'
          ? `${path}: no such file or folder: give .bpmn files, or folders to search for them`
          : `${path}: cannot be looked at (${code ?? errorMessage(err)})`,
      );
    }
    if (!stats.isDirectory()) {
      // A file given by name is checked whatever its name; what is not a regular file is refused unread.
      found.push({ file: path });
      continue;
    }
    const below = await search(path);
    if (below.length === 0) throw new UsageError(`${path}: no .bpmn file in this folder or below it`);
    found.push(...below);
  }
  const seen = new Set<string>();
  return found.filter(({ file }) => {
    const key = resolve(file);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A model's bytes, or why they are not read: not a regular file, or over
 * MAX_MODEL_BYTES. Opened without blocking (a FIFO would wait for a writer)
 * and measured on the open file, so what is read is what was measured.
 */
async function readModel(file: string): Promise<Buffer | string> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer (a regular file is read as usual).
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return `cannot be read (${errorCode(err) ?? errorMessage(err)})`;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return 'not a regular file: give .bpmn files, or folders to search for them';
    if (stats.size > MAX_MODEL_BYTES)
      return `${stats.size} bytes, over the ${MAX_MODEL_BYTES / 1024 / 1024} MiB a model may have: not read (a model is a few hundred KiB at most; is this the right file?)`;
    const bytes = await handle.readFile();
    if (bytes.length > MAX_MODEL_BYTES)
      return `over ${MAX_MODEL_BYTES / 1024 / 1024} MiB while it was read: not checked`;
    return bytes;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** One file's check (with `elements`, what each element of a model that loads runs); never throws. */
export async function checkModelFile(file: string, elements = false): Promise<ModelCheck> {
  try {
    const bytes = await readModel(file);
    if (typeof bytes === 'string') return { file, ...refusedFile(bytes) };
    // As the deployment reads a model (engine/deployed.ts): the file as UTF-8.
    const xml = bytes.toString('utf8');
    if (xml.trim() === '')
      return {
        file,
        ...refusedFile('the file is empty: a model is BPMN 2.0 XML, drawn in a modeller and saved as .bpmn'),
      };
    return { file, ...(await checkModelXml(xml, elements)) };
  } catch (err) {
    return { file, ...unexpectedVerdict(err) };
  }
}

/** `inbox model check PATH... [--elements] [--json]`. */
export async function modelCheckCommand(
  io: ModelCheckIo,
  paths: readonly string[],
  json: boolean,
  elements = false,
): Promise<void> {
  const checks: ModelCheck[] = [];
  for (const { file, unreadable } of await modelFiles(paths)) {
    const check =
      unreadable === undefined ? await checkModelFile(file, elements) : { file, ...refusedFile(unreadable) };
    checks.push(check);
    // A line as each file is done: a long run shows its progress.
    if (!json) io.out(checkLine(check));
    if (!json && elements) for (const line of noteLines(check)) io.out(line);
  }
  io.out(json ? JSON.stringify(checkViews(checks, elements), null, 2) : summaryLine(checks));
  const refused = checks.filter((c) => !c.ok).length;
  if (refused > 0)
    throw new CliFailure(
      EXIT.FAILED,
      `${refused} of ${checks.length} ${checks.length === 1 ? 'model' : 'models'} refused: fix what each line names, then check again`,
    );
}
