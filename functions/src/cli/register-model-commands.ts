import type { Command } from 'commander';
import type { CliContext, CliIo } from './context';
import { load } from './command-loaders';

/** model check: what a modeller runs before a deploy, without a project or Firestore. */
export function addModelCommand(program: Command, io: CliIo): void {
  const model = program.command('model').description('BPMN models before a deploy: check that each loads');
  model
    .command('check <paths...>')
    .description(
      'whether each .bpmn file loads as a deploy loads it (folders: every *.bpmn below them): one line per file, its process key or the refused element, its kind and what to do (exit 1 when any is refused); needs no project',
    )
    .option('--elements', 'under each file that loads, what each element runs as read: handler types, keys, FEEL')
    .action((paths: string[], o: { elements?: boolean }) => {
      const json = program.opts<{ json?: boolean }>().json === true;
      return load.modelCheck().modelCheckCommand(io, paths, json, o.elements === true);
    });
}

/** model diff and model impact: what a change of the models changes, with what runs there when the project is read. */
export function addModelDiffCommands(
  program: Command,
  io: CliIo,
  env: NodeJS.ProcessEnv,
  project: () => Promise<CliContext>,
): void {
  const model = program.commands.find((c) => c.name() === 'model');
  if (model === undefined) throw new Error('the model command is registered before model diff');
  const json = (): boolean => program.opts<{ json?: boolean }>().json === true;
  model
    .command('diff <paths...>')
    .description(
      'OLD NEW: the elements and flows added, removed and changed between two versions of a process (.bpmn files); needs no project unless --live, --deployed or --from-version reads it, which adds what waits at each removed or changed element',
    )
    .option(
      '--live',
      "add the project's tokens, pending jobs, timers and user tasks at each removed or changed element",
    )
    .option('--deployed', 'OLD is the newest version of the process stored in the project (give NEW only)')
    .option('--from-version <version>', 'OLD is this stored version of the process (give NEW only)')
    .action((paths: string[], o: import('./model-diff-command').ModelDiffOptions) =>
      load.modelDiff().modelDiffCommand(io, paths, o, json(), project),
    );
  model
    .command('impact')
    .description(
      "the app (INBOX_APP) against the project, as a deploy does: each changed model's diff from its newest stored version with what waits at each removed or changed element, and the step handlers the app drops that pending jobs still need (exit 1: refused, unless --force)",
    )
    .option(
      '--force',
      'do not refuse: say which pending jobs will become incidents (JOB_FAILED: no async handler registered)',
    )
    .action(async (o: { force?: boolean }) =>
      load.modelImpact().modelImpactCommand(io, env, await project(), json(), o.force === true),
    );
}
