import { relative } from 'node:path';
import { checkApp } from '../apps/check-app';
import { packageRoot } from '../apps/load-app';
import { loadAppSettings } from '../config';
import type { CliIo } from './context';

/**
 * `inbox app [--json]`: the app the deployment runs (INBOX_APP), loaded and
 * checked against its models as a function start does (a task without a
 * handler, a handler without a task, a message no model can receive: one
 * line naming the app's file, exit 1), then what it is: its processes,
 * message types with their topics and subscriptions, steps, publishes,
 * collections. `--json` is what infra/deploy.sh reads to create the topics
 * and subscriptions. Needs no project and no Firestore.
 */

export async function appCommand(io: CliIo, env: NodeJS.ProcessEnv, json: boolean): Promise<void> {
  const { app, folder, modelsDir, steps, engine, topology } = await checkApp(loadAppSettings(env));
  const root = packageRoot();
  const view = {
    app: app.name,
    folder: relative(root, folder),
    models: relative(root, modelsDir),
    processes: engine.processKeys,
    messages: app.messages.map((m) => ({
      name: m.name,
      topic: m.topic,
      subscription: m.subscription,
      nameAttribute: m.nameAttribute,
    })),
    steps,
    syncSteps: Object.keys(app.syncSteps).sort(),
    keptForOlderVersions: [...app.keepForOlderVersions].sort(),
    topology,
  };
  if (json) {
    io.out(JSON.stringify(view, null, 2));
    return;
  }
  io.out(`app ${view.app} (${view.folder}): processes ${view.processes.join(', ')} from ${view.models}/`);
  for (const t of topology.inbound)
    io.out(`  topic ${t.topic} → push subscription ${t.subscription}: ${t.messages.join(', ')}`);
  io.out(`  dead letters: topic ${topology.deadLetter.topic} → push subscription ${topology.deadLetter.subscription}`);
  io.out(
    `  steps: ${steps.join(', ') || '(none)'}${view.syncSteps.length > 0 ? `; synchronous: ${view.syncSteps.join(', ')}` : ''}`,
  );
  if (view.keptForOlderVersions.length > 0)
    io.out(
      `  kept for older versions: ${view.keptForOlderVersions.join(', ')} (remove each once \`inbox versions\` shows no running instance of a version that draws it)`,
    );
  io.out(
    `  publishes to: ${topology.publishes.join(', ') || '(nothing)'}; writes: ${topology.collections.join(', ') || '(nothing of its own)'}`,
  );
  io.out(
    'checked: every async task has its handler, every handler its task (or its place in keepForOlderVersions), every message a model waits for is declared',
  );
}
