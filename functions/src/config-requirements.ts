import { type Config, ConfigError } from './config';

/**
 * Settings only some functions need, asked for by the factory of each
 * (wiring.ts), so the others start without them and a missing one fails at
 * start-up naming the variable.
 */

/**
 * The push endpoints' token check settings: null while INBOX_PUSH_AUTH=disabled
 * (the local emulator sends no token); a ConfigError naming each missing
 * variable while it is enabled.
 */
export function requirePushAuth(
  config: Config,
): { readonly audience: string; readonly allowedEmails: readonly string[] } | null {
  const auth = config.pushAuth;
  if (auth.mode === 'disabled') return null;
  const missing = [
    ...(auth.audience === null ? ['INBOX_PUSH_AUDIENCE'] : []),
    ...(auth.allowedEmails.length === 0 ? ['INBOX_PUSH_SERVICE_ACCOUNTS'] : []),
  ];
  if (missing.length > 0 || auth.audience === null) {
    const hint = 'required while INBOX_PUSH_AUTH=enabled (set INBOX_PUSH_AUTH=disabled only for the local emulator)';
    throw new ConfigError(`invalid configuration:\n${missing.map((m) => `  ${m}: ${hint}`).join('\n')}`);
  }
  return { audience: auth.audience, allowedEmails: auth.allowedEmails };
}

/** The runJob URL, for functions that create jobs; a ConfigError naming the variable if unset. */
export function requireRunJobUrl(config: Config): string {
  if (config.tasks.runJobUrl === null)
    throw new ConfigError(
      'invalid configuration:\n  INBOX_RUN_JOB_URL: required by functions that start async steps (the URL of runJob)',
    );
  if (config.pushAuth.mode === 'enabled' && config.tasks.serviceAccount === null) {
    throw new ConfigError(
      'invalid configuration:\n  INBOX_TASKS_SERVICE_ACCOUNT: required while INBOX_PUSH_AUTH=enabled (Cloud Tasks signs its OIDC token as this account)',
    );
  }
  return config.tasks.runJobUrl;
}

/**
 * The fireTimer URL, for functions that move tokens (any move may reach a
 * timer: a timer catch event, a boundary timer, an event-based gateway); a
 * ConfigError naming the variable if unset. Timer tasks are signed as the
 * job tasks are, so {@link requireRunJobUrl}'s account check covers them.
 */
export function requireFireTimerUrl(config: Config): string {
  if (config.tasks.fireTimerUrl === null)
    throw new ConfigError(
      'invalid configuration:\n  INBOX_FIRE_TIMER_URL: required by functions that move tokens, which may set timers (the URL of fireTimer)',
    );
  return config.tasks.fireTimerUrl;
}
