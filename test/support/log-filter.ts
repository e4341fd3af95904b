import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Evaluates the filter of a log-based metric (infra/monitoring/metrics/*.json)
 * against one of our structured log lines, for the tests that hold the
 * functions' logging to what the metrics count.
 *
 * Only a plain conjunction of these terms is understood:
 *   resource.type="VALUE"       our functions log as cloud_run_revision (Cloud Run functions)
 *   jsonPayload.A.B="VALUE"     the field is that string
 *   jsonPayload.A.B>=N          the field is a number ≥ N
 *   jsonPayload.A.B:*           the field is there
 *   severity=LEVEL, severity>=LEVEL
 * Anything else (OR, NOT, parentheses, other operators or fields) throws
 * naming the term, so a filter cannot grow past what the tests check
 * without someone extending this evaluator on purpose.
 */

/** The monitored resource type of every function's log entries on Cloud Run (gen2 Cloud Functions). */
export const FUNCTION_RESOURCE_TYPE = 'cloud_run_revision';

/** Cloud Logging's severities, in order. */
const SEVERITIES = ['DEFAULT', 'DEBUG', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'CRITICAL', 'ALERT', 'EMERGENCY'];

type Term =
  | { readonly text: string; readonly kind: 'resource'; readonly value: string }
  | { readonly text: string; readonly kind: 'equals'; readonly path: readonly string[]; readonly value: string }
  | { readonly text: string; readonly kind: 'atLeast'; readonly path: readonly string[]; readonly value: number }
  | { readonly text: string; readonly kind: 'present'; readonly path: readonly string[] }
  | { readonly text: string; readonly kind: 'severity'; readonly op: '=' | '>='; readonly value: string };

/** Thrown for a filter term this evaluator does not understand. */
export class UnsupportedFilterError extends Error {
  override readonly name = 'UnsupportedFilterError';
}

const FIELD = String.raw`jsonPayload((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`;
const PATTERNS: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray, text: string) => Term]> = [
  [/^resource\.type="([a-z_]+)"$/, (m, text) => ({ text, kind: 'resource', value: m[1] as string })],
  [
    new RegExp(`^${FIELD}="([^"\\\\]*)"$`),
    (m, text) => ({ text, kind: 'equals', path: (m[1] as string).slice(1).split('.'), value: m[2] as string }),
  ],
  [
    new RegExp(`^${FIELD}>=(-?\\d+)$`),
    (m, text) => ({ text, kind: 'atLeast', path: (m[1] as string).slice(1).split('.'), value: Number(m[2]) }),
  ],
  [new RegExp(`^${FIELD}:\\*$`), (m, text) => ({ text, kind: 'present', path: (m[1] as string).slice(1).split('.') })],
  [
    /^severity(=|>=)([A-Z]+)$/,
    (m, text) => {
      if (!SEVERITIES.includes(m[2] as string))
        throw new UnsupportedFilterError(`unknown severity in filter term: ${text}`);
      return { text, kind: 'severity', op: m[1] as '=' | '>=', value: m[2] as string };
    },
  ],
];

/** The terms of a conjunctive filter; throws {@link UnsupportedFilterError} on anything else. */
export function parseFilter(filter: string): Term[] {
  if (/[()]/.test(filter)) throw new UnsupportedFilterError(`parentheses (grouping, OR) are not evaluated: ${filter}`);
  return filter.split(/\s+AND\s+/).map((raw) => {
    const text = raw.trim();
    for (const [pattern, build] of PATTERNS) {
      const match = pattern.exec(text);
      if (match !== null) return build(match, text);
    }
    throw new UnsupportedFilterError(
      `filter term not evaluated by test/support/log-filter.ts: ${JSON.stringify(text)} (in ${filter})`,
    );
  });
}

function valueAt(line: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = line;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, key))
      return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function holds(term: Term, line: Readonly<Record<string, unknown>>): boolean {
  switch (term.kind) {
    case 'resource':
      return term.value === FUNCTION_RESOURCE_TYPE;
    case 'equals':
      return valueAt(line, term.path) === term.value;
    case 'atLeast': {
      const value = valueAt(line, term.path);
      return typeof value === 'number' && value >= term.value;
    }
    case 'present': {
      const value = valueAt(line, term.path);
      // How Cloud Logging treats a JSON null under `:*` is not modelled here: refuse to guess.
      if (value === null)
        throw new UnsupportedFilterError(`${term.text}: the field is null, which this evaluator does not decide`);
      return value !== undefined;
    }
    case 'severity': {
      const rank = SEVERITIES.indexOf(typeof line.severity === 'string' ? line.severity : 'DEFAULT');
      const wanted = SEVERITIES.indexOf(term.value);
      return term.op === '=' ? rank === wanted : rank >= wanted;
    }
  }
}

/** The terms of `filter` the line does not satisfy (empty: the metric counts the line). */
export function unmetTerms(filter: string, line: Readonly<Record<string, unknown>>): string[] {
  return parseFilter(filter)
    .filter((term) => !holds(term, line))
    .map((term) => term.text);
}

/** A log-based metric of infra/monitoring/metrics, as far as these tests read it. */
export interface LogMetricFile {
  readonly name: string;
  readonly filter: string;
  readonly labelExtractors?: Readonly<Record<string, string>>;
}

export function logMetric(name: string): LogMetricFile {
  return JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'infra', 'monitoring', 'metrics', `${name}.json`), 'utf8'),
  ) as LogMetricFile;
}

/** The label values a metric would extract from a line (EXTRACT(jsonPayload.…) only; anything else throws). */
export function extractLabels(metric: LogMetricFile, line: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const labels: Record<string, unknown> = {};
  for (const [label, extractor] of Object.entries(metric.labelExtractors ?? {})) {
    const match = /^EXTRACT\(jsonPayload((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\)$/.exec(extractor);
    if (match === null) throw new UnsupportedFilterError(`label extractor not evaluated: ${label}: ${extractor}`);
    labels[label] = valueAt(line, (match[1] as string).slice(1).split('.'));
  }
  return labels;
}
