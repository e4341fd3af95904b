/**
 * What every registration of commands shares: each command's module, loaded
 * when the command runs, and the texts of the repair options.
 */
// Each command's module (and the SDKs behind it) is loaded only when the command runs: one file per command, <command>-command.ts.
export const load = {
  stats: () => require('./stats-command') as typeof import('./stats-command'),
  list: () => require('./list-command') as typeof import('./list-command'),
  show: () => require('./show-command') as typeof import('./show-command'),
  explain: () => require('./explain-command') as typeof import('./explain-command'),
  requeue: () => require('./requeue-command') as typeof import('./requeue-command'),
  park: () => require('./park-command') as typeof import('./park-command'),
  instances: () => require('./instances-command') as typeof import('./instances-command'),
  incidents: () => require('./incidents-command') as typeof import('./incidents-command'),
  moveToken: () => require('./move-token-command') as typeof import('./move-token-command'),
  migrate: () => require('./migrate-command') as typeof import('./migrate-command'),
  resolveIncident: () => require('./resolve-incident-command') as typeof import('./resolve-incident-command'),
  admitCollision: () => require('./admit-collision-command') as typeof import('./admit-collision-command'),
  dismiss: () => require('./dismiss-command') as typeof import('./dismiss-command'),
  orphanPayloads: () => require('./orphan-payloads-command') as typeof import('./orphan-payloads-command'),
  orphanChunks: () => require('./orphan-chunks-command') as typeof import('./orphan-chunks-command'),
  cancelToken: () => require('./cancel-token-command') as typeof import('./cancel-token-command'),
  waiting: () => require('./waiting-command') as typeof import('./waiting-command'),
  timers: () => require('./timers-command') as typeof import('./timers-command'),
  fireTimer: () => require('./fire-timer-command') as typeof import('./fire-timer-command'),
  shardSubscriptions: () => require('./shard-subscriptions-command') as typeof import('./shard-subscriptions-command'),
  purge: () => require('./purge-command') as typeof import('./purge-command'),
  console: () => require('./console-command') as typeof import('./console-command'),
  app: () => require('./app-command') as typeof import('./app-command'),
  tasks: () => require('./tasks-command') as typeof import('./tasks-command'),
  modelCheck: () => require('./model-check-command') as typeof import('./model-check-command'),
  versions: () => require('./versions-command') as typeof import('./versions-command'),
  modelDiff: () => require('./model-diff-command') as typeof import('./model-diff-command'),
  modelImpact: () => require('./model-impact-command') as typeof import('./model-impact-command'),
};

/** The --dry-run of a repair: its own transaction, rolled back (operations/repairs.ts). */
export const DRY_RUN =
  'run every check of the repair and show what it would write and the --expect line of what it read; change nothing (exit 1 when it would be refused)';
/** The --expect of a repair: the basis its --dry-run printed (engine/repair-basis.ts). */
export const EXPECT =
  'the line a --dry-run printed: refuse, changing nothing, if what the repair acts on changed since that preview';
