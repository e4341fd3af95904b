/**
 * `inbox model diff OLD NEW [--live] [--json]`, `inbox model diff NEW
 * --deployed|--from-version V [--json]`: what changed between two versions
 * of one process (bpmn/model-diff.ts): elements added, removed and changed
 * (and what of them), flows added, removed and changed. OLD and NEW are
 * `.bpmn` files; OLD may instead be the newest version stored in the
 * project's processVersions (`--deployed`) or a stored version by its id
 * (`--from-version`). Without a project (two files, no `--live`) it reads no
 * Firestore. Reading the project (`--live`, `--deployed`, `--from-version`)
 * adds, at each removed or changed element, the tokens of RUNNING and
 * INCIDENT instances (of any version but NEW's), their pending jobs,
 * scheduled timers and open user tasks (operations/model-impact.ts, bounded).
 */
import { readFile, stat } from 'node:fs/promises';
import { DiffRefused, diffModels, type ModelDiff } from '../bpmn/model-diff';
import type { ProcessModel } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { errorCode, errorMessage } from '../core/errors';
import { readProcessLoad } from '../operations/model-impact';
import { newestVersions, storedModel } from '../operations/stored-versions';
import { storedVersions } from '../operations/versions';
import type { CliContext, CliIo } from './context';
import { CliFailure, EXIT } from './failures';
import { MAX_MODEL_BYTES } from './model-check';
import { type DiffImpact, diffLines, impactOf } from './model-diff-lines';
import { UsageError } from './parse';

export interface ModelDiffOptions {
  readonly fromVersion?: string;
  readonly deployed?: boolean;
  readonly live?: boolean;
}

/** A `.bpmn` file's model, or a failure naming the file and what to do. */
export async function loadModelFile(file: string): Promise<ProcessModel> {
  let size;
  try {
    const stats = await stat(file);
    if (!stats.isFile()) throw new UsageError(`${file}: not a file: give a .bpmn file`);
    size = stats.size;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file}: cannot be read (${errorCode(err) ?? errorMessage(err)}): give a .bpmn file`);
  }
  if (size > MAX_MODEL_BYTES)
    throw new UsageError(`${file}: ${size} bytes, over the ${MAX_MODEL_BYTES / 1024 / 1024} MiB a model may have`);
  const xml = await readFile(file, 'utf8');
  try {
    return await parseProcessModel(xml);
  } catch (err) {
    throw new CliFailure(
      EXIT.FAILED,
      `${file} does not load (${errorMessage(err).replace(/\s+/g, ' ')}): \`inbox model check ${file}\` names the element and what to do`,
    );
  }
}

/** The element ids of a model's multi-instance activities: their items are instances of `KEY#ACTIVITY`. */
export const itemActivitiesOf = (...models: readonly ProcessModel[]): string[] => [
  ...new Set(
    models.flatMap((m) =>
      Object.values(m.nodes)
        .filter((n) => n.loop !== undefined)
        .map((n) => n.id),
    ),
  ),
];

/** OLD as the flags name it: a file, or a stored version of NEW's process. */
async function oldModel(
  paths: readonly string[],
  options: ModelDiffOptions,
  next: ProcessModel,
  project: () => Promise<CliContext>,
): Promise<{ model: ProcessModel; label: string }> {
  const [first] = paths;
  if (options.fromVersion === undefined && options.deployed !== true) {
    if (first === undefined) throw new UsageError('give OLD and NEW, two .bpmn files');
    return { model: await loadModelFile(first), label: first };
  }
  const ctx = await project();
  let version = options.fromVersion;
  if (version === undefined) {
    version = newestVersions(await storedVersions(ctx.db(), next.key)).get(next.key)?.version;
    if (version === undefined)
      throw new CliFailure(
        EXIT.FAILED,
        `no version of ${next.key} is stored in project ${ctx.config.projectId}: nothing of it was deployed there yet (compare two files instead)`,
      );
  }
  const found = await storedModel(ctx.db(), next.key, version);
  if ('missing' in found) throw new CliFailure(EXIT.FAILED, found.missing);
  return { model: found.model, label: `version ${version}${options.deployed === true ? ' (deployed)' : ''}` };
}

/** `inbox model diff`. `project` makes the CLI's context and checks Firestore answers (called only when the project is read). */
export async function modelDiffCommand(
  io: Pick<CliIo, 'out'>,
  paths: readonly string[],
  options: ModelDiffOptions,
  json: boolean,
  project: () => Promise<CliContext>,
): Promise<void> {
  const stored = options.fromVersion !== undefined || options.deployed === true;
  if (options.fromVersion !== undefined && options.deployed === true)
    throw new UsageError('--from-version and --deployed both name OLD: give one of them');
  if (stored && paths.length !== 1)
    throw new UsageError(
      `with ${options.deployed === true ? '--deployed' : '--from-version'}, give NEW only: one .bpmn file`,
    );
  if (!stored && paths.length !== 2) throw new UsageError('give OLD and NEW, two .bpmn files (or NEW with --deployed)');
  const newFile = paths[paths.length - 1] ?? '';
  const next = await loadModelFile(newFile);
  const old = await oldModel(paths, options, next, project);
  let diff: ModelDiff;
  try {
    diff = diffModels(old.model, next);
  } catch (err) {
    if (err instanceof DiffRefused) throw new UsageError(err.message);
    throw err;
  }
  let impact: DiffImpact | null = null;
  if (stored || options.live === true) {
    const ctx = await project();
    const load = await readProcessLoad(ctx.db(), next.key, itemActivitiesOf(old.model, next), next.version);
    impact = impactOf(diff, load);
  }
  if (json) {
    io.out(JSON.stringify({ from: old.label, to: newFile, ...diff, ...(impact === null ? {} : { impact }) }, null, 2));
    return;
  }
  for (const line of diffLines(diff, old.label, newFile, impact)) io.out(line);
}
