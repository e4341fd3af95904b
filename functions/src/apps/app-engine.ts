import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { App } from '../app';
import { loadProcessModel } from '../engine/deployed';
import { Engine, type MessageBuffer } from '../engine/engine';
import { AppDefinitionError } from './check-definition';
import { modelProblems } from './check-models';
import { packageRoot } from './load-app';
import { publishSteps } from '../jobs/publish-steps';

/**
 * The engine of an app: every `.bpmn` of its models folder, checked against
 * the app (apps/check-models.ts) before anything runs, so a task without a
 * handler, a handler without a task or a message nobody declares refuses
 * the start with one line per problem, naming the app's file, never a crash
 * at the first message.
 */
export async function loadAppEngine(
  loaded: { readonly app: App; readonly folder: string },
  modelsDir: string,
  stepIds: readonly string[],
  buffer: MessageBuffer | null,
): Promise<Engine> {
  const { app } = loaded;
  const where = relative(packageRoot(), join(loaded.folder, 'index.ts'));
  let files: string[];
  try {
    files = (await readdir(modelsDir)).filter((f) => f.endsWith('.bpmn')).sort();
  } catch {
    throw new AppDefinitionError(
      `${where}: its models folder ${modelsDir} cannot be read: put the app's .bpmn files in ${app.models}/ beside index.ts (or set models)`,
    );
  }
  if (files.length === 0) throw new AppDefinitionError(`${where}: no .bpmn files in ${modelsDir}`);
  // A model the engine cannot run is refused naming the app, the file and (the parser's message) the element.
  const models = await Promise.all(
    files.map((f) =>
      loadProcessModel(join(modelsDir, f)).catch((err: unknown) => {
        throw new AppDefinitionError(
          `${where}: ${relative(packageRoot(), join(modelsDir, f))}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }),
    ),
  );
  const sends = new Set(app.sends.map((m) => m.name));
  const problems = modelProblems(models, {
    steps: new Set(stepIds),
    syncSteps: new Set(Object.keys(app.syncSteps)),
    keptForOlderVersions: new Set(app.keepForOlderVersions),
    messages: new Set(app.messages.map((m) => m.name)),
    sends,
  });
  if (problems.length > 0) throw new AppDefinitionError(`${where}: ${problems.join('; ')}`);
  return new Engine(models, app.syncSteps, new Set([...stepIds, ...Object.keys(publishSteps(models, app))]), buffer);
}
