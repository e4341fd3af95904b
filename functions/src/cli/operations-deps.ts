import { hostname, userInfo } from 'node:os';
import type { Config } from '../config';
import { createLogger, type Logger } from '../log';
import { operationsDepsOf } from '../operations/deps';
import type { Actor, OperationsDeps } from '../operations/types';
import type { CliContext } from './context';

/** The messages of the one line operations/ logs per applied repair (repairs.ts) and per completed user task (user-tasks.ts). */
const AUDIT_LINES: ReadonlySet<string> = new Set(['operator repair', 'user task completed']);

/**
 * `log` without the audit line: on the operator's terminal it is noise
 * (stderr stays for failures), and the CLI's record of who did what is the
 * repair record on the changed document. The console logs it (Cloud Logging).
 */
function withoutAuditLine(log: Logger): Logger {
  return {
    log: (severity, message, fields) => (AUDIT_LINES.has(message) ? undefined : log.log(severity, message, fields)),
    info: (message, fields) => (AUDIT_LINES.has(message) ? undefined : log.info(message, fields)),
    warn: (message, fields) => log.warn(message, fields),
    error: (message, fields) => log.error(message, fields),
  };
}

/** What operations/ needs, from a CLI command's context; log lines (dispatch failures, duplicates) on stderr. */
export function operationsDeps(
  ctx: CliContext,
  base: Readonly<Record<string, unknown>> = { function: 'inbox-cli' },
): OperationsDeps {
  // ctx.db, not the runtime's: the context closes the client only if a command opened it.
  return operationsDepsOf(
    ctx.config,
    { ...ctx.runtime, db: ctx.db },
    withoutAuditLine(createLogger((line) => ctx.io.err(line), base)),
    ctx.now,
  );
}

/**
 * Who runs the CLI: INBOX_OPERATOR, else the OS account as `user@host`.
 * userInfo() throws for a uid without a passwd entry (some containers): then USER, else `uid <n>`.
 */
export function cliActor(config: Pick<Config, 'operator'>, env: NodeJS.ProcessEnv = process.env): Actor {
  if (config.operator !== null) return { id: config.operator, via: 'cli' };
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = env.USER ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
  return { id: `${user}@${hostname()}`, via: 'cli' };
}
