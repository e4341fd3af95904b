/**
 * Structured logging: one JSON object per line with `severity` and `message`,
 * the shape Cloud Logging parses into a structured entry (jsonPayload). A
 * line written while a span is active carries its trace and span id in the
 * fields Cloud Logging reads (trace/trace.ts, traceLogFields).
 */
import { traceLogFields } from './trace/trace';

export type Severity = 'DEBUG' | 'INFO' | 'NOTICE' | 'WARNING' | 'ERROR' | 'CRITICAL';

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  log(severity: Severity, message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Where lines go; stdout by default. Tests pass an array sink. */
export type LineSink = (line: string) => void;

const stdoutSink: LineSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Keeps errors readable in JSON (Error's fields are not enumerable). */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}

export function createLogger(sink: LineSink = stdoutSink, base: LogFields = {}): Logger {
  const log = (severity: Severity, message: string, fields: LogFields = {}): void => {
    sink(JSON.stringify({ severity, message, ...traceLogFields(), ...base, ...fields }, replacer));
  };
  return {
    log,
    info: (m, f) => log('INFO', m, f),
    warn: (m, f) => log('WARNING', m, f),
    error: (m, f) => log('ERROR', m, f),
  };
}
