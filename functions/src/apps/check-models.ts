/**
 * The checks of an app that need its models: every async task has a
 * handler and every handler a task (one left over is a task renamed in the
 * model but not in the code) unless the app keeps it for older versions
 * (`keepForOlderVersions`: then it must be a handler no task names), every synchronous task a pure handler, and
 * every message a model waits for or starts by is one the app declares
 * (otherwise it could never arrive). Pure: the models come parsed.
 */
import { handlerKeyOf, publishedMessage, publishesByJob, type ProcessModel } from '../bpmn/model';

/** One problem, naming the item and what to do. */
export function modelProblems(
  models: readonly ProcessModel[],
  app: {
    readonly steps: ReadonlySet<string>;
    readonly syncSteps: ReadonlySet<string>;
    readonly messages: ReadonlySet<string>;
    /** The messages the system publishes for the app (its `sends`). */
    readonly sends?: ReadonlySet<string>;
    /** The step keys kept only for instances of older versions (`keepForOlderVersions`). */
    readonly keptForOlderVersions?: ReadonlySet<string>;
  },
): string[] {
  const problems: string[] = [];
  const asyncTasks = new Set<string>();
  const syncTasks = new Set<string>();
  for (const model of models) {
    for (const node of Object.values(model.nodes)) {
      const where = `${model.key}/${node.id}`;
      const published = publishedMessage(node);
      if (publishesByJob(node)) {
        const key = 'job' in node ? handlerKeyOf(node) : node.id;
        asyncTasks.add(key);
        const bySystem = published !== null && app.sends?.has(published) === true;
        if (bySystem && app.steps.has(key))
          problems.push(
            `${where} publishes ${published}, which sends declares, and steps has a handler ${key} too: keep one (sends: the system publishes it; a handler: it does)`,
          );
        if (!bySystem && !app.steps.has(key))
          problems.push(
            published === null
              ? `${where} is run by a worker of type ${key}, but steps has no handler ${key}: add one`
              : `${where} publishes message ${published}, but sends does not declare it and steps has no handler ${key}: declare { name: '${published}', topic } in sends, or give steps a handler`,
          );
        continue;
      }
      if (node.kind === 'serviceTask' || node.kind === 'sendTask' || node.kind === 'businessRuleTask') {
        const key = handlerKeyOf(node);
        (node.async ? asyncTasks : syncTasks).add(key);
        if (node.async && !app.steps.has(key))
          problems.push(
            node.job === undefined
              ? `task ${where} is async but steps has no handler ${key}: add one (or drop inbox:async for a pure synchronous task in syncSteps)`
              : `task ${where} has zeebe:taskDefinition type ${key} but steps has no handler ${key}: add one`,
          );
        if (!node.async && !app.syncSteps.has(node.id))
          problems.push(
            `task ${where} is synchronous but syncSteps has no handler ${node.id}: add one, or mark the task inbox:async="true" and give steps a handler`,
          );
      }
      if (
        (node.kind === 'messageCatchEvent' || node.kind === 'receiveTask' || node.kind === 'messageStartEvent') &&
        !app.messages.has(node.messageName)
      ) {
        problems.push(
          `${where} waits for message ${node.messageName}, which messages does not declare: no such message could ever arrive; declare it (defineMessage) or correct the name`,
        );
      }
    }
  }
  const kept = app.keptForOlderVersions ?? new Set<string>();
  for (const id of app.steps)
    if (!asyncTasks.has(id) && !kept.has(id))
      problems.push(
        `steps has a handler ${id}, but no model has an async task of that id or task type: rename it to the task's id (or its zeebe:taskDefinition type), or remove it; if instances of an older version still need it, list ${id} in keepForOlderVersions`,
      );
  for (const id of kept) {
    if (asyncTasks.has(id))
      problems.push(
        `keepForOlderVersions lists ${id}, but a task of the models is run by it: it is not only for older versions; remove ${id} from keepForOlderVersions (steps keeps it)`,
      );
    else if (!app.steps.has(id))
      problems.push(
        `keepForOlderVersions lists ${id}, but steps has no handler ${id}: add the handler older versions' instances need, or remove ${id} from keepForOlderVersions once \`inbox versions\` shows no running instance of a version that draws it`,
      );
  }
  for (const id of app.syncSteps)
    if (!syncTasks.has(id))
      problems.push(`syncSteps has a handler ${id}, but no model has a synchronous task of that id`);
  return problems;
}
