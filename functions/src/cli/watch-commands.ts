// main.ts loads this module for the commands about waiting tokens and timers.
export { waiting, type WaitingOptions } from './waiting-command';
export { type TimersOptions, timers } from './timers-command';
export { shardSubscriptionsCommand } from './shard-subscriptions-command';
export { fireTimerCommand } from './fire-timer-command';
