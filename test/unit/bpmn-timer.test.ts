import type { TimerDefinition } from '../../functions/src/bpmn/model';
import {
  MAX_DURATION_MS,
  parseCycle,
  parseDateTime,
  parseDuration,
  resolveTimer,
} from '../../functions/src/bpmn/timer';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const now = new Date('2026-12-01T10:00:00Z');

describe('parseDuration', () => {
  test.each<[string, number]>([
    ['PT0S', 0],
    ['PT30S', 30 * S],
    ['PT1.5S', 1_500],
    ['PT0,25S', 250],
    ['PT0.0004S', 0],
    ['PT5M', 5 * M],
    ['PT2H', 2 * H],
    ['P14D', 14 * D],
    ['P2W', 14 * D],
    ['P1DT12H', 36 * H],
    ['P1W2DT3H4M5S', 9 * D + 3 * H + 4 * M + 5 * S],
    ['PT36H', 36 * H],
  ])('%s = %i ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: ms });
  });

  test.each<[string, string]>([
    ['P1Y', 'years or months'],
    ['P2M', 'years or months'],
    ['P1Y2M3D', 'years or months'],
    ['P', 'no ISO 8601 duration'],
    ['PT', 'no ISO 8601 duration'],
    ['P1DT', 'no ISO 8601 duration'],
    ['14D', 'no ISO 8601 duration'],
    ['p14d', 'no ISO 8601 duration'],
    ['P1.5D', 'no ISO 8601 duration'],
    ['P-1D', 'no ISO 8601 duration'],
    ['PT1S ', 'no ISO 8601 duration'],
    ['', 'no ISO 8601 duration'],
    ['P1D2W', 'no ISO 8601 duration'],
    ['P36600D', 'longer than 100 years'],
    ['P99999999999999999999999D', 'longer than 100 years'],
  ])('%j is refused: %s', (text, error) => {
    const parsed = parseDuration(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain(error);
  });

  test('the limit itself is accepted', () => {
    expect(parseDuration(`P${MAX_DURATION_MS / D}D`)).toEqual({ ok: true, value: MAX_DURATION_MS });
  });
});

describe('parseDateTime', () => {
  test.each<[string, string]>([
    ['2026-12-24T18:00:00Z', '2026-12-24T18:00:00.000Z'],
    ['2026-12-24T18:00Z', '2026-12-24T18:00:00.000Z'],
    ['2026-12-24T18:00:00+01:00', '2026-12-24T17:00:00.000Z'],
    ['2026-12-24T18:00:00-05:30', '2026-12-24T23:30:00.000Z'],
    ['2026-12-24T18:00:00.25Z', '2026-12-24T18:00:00.250Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
  ])('%s', (text, iso) => {
    const parsed = parseDateTime(text);
    expect(parsed.ok ? parsed.value.toISOString() : parsed.error).toBe(iso);
  });

  test.each<[string, string]>([
    ['2026-12-24T18:00:00', 'with an offset or Z'],
    ['2026-12-24', 'with an offset or Z'],
    ['2026-12-24 18:00:00Z', 'with an offset or Z'],
    ['tomorrow', 'with an offset or Z'],
    ['2026-13-01T00:00:00Z', 'out of range'],
    ['2026-02-29T00:00:00Z', 'out of range'],
    ['2100-02-29T00:00:00Z', 'out of range'],
    ['2026-04-31T00:00:00Z', 'out of range'],
    ['2026-12-00T00:00:00Z', 'out of range'],
    ['2026-12-24T24:00:00Z', 'out of range'],
    ['2026-12-24T18:60:00Z', 'out of range'],
    ['2026-12-24T18:00:60Z', 'out of range'],
    ['2026-12-24T18:00:00+19:00', 'out of range'],
    ['2026-12-24T18:00:00+01:60', 'out of range'],
  ])('%j is refused: %s', (text, error) => {
    const parsed = parseDateTime(text);
    expect(parsed.ok ? '' : parsed.error).toContain(error);
  });
});

describe('parseCycle', () => {
  test.each<[string, number, number]>([
    ['R1/PT1S', 1, S],
    ['R3/P1D', 3, D],
    ['R1000/PT1H', 1_000, H],
  ])('%s', (text, repetitions, intervalMs) => {
    expect(parseCycle(text)).toEqual({ ok: true, value: { repetitions, intervalMs } });
  });

  test.each<[string, string]>([
    ['R/P1D', 'no bounded cycle'],
    ['R0/P1D', 'from 1 to 1000'],
    ['R1001/P1D', 'from 1 to 1000'],
    ['R3/2026-12-01T00:00:00Z/P1D', 'no ISO 8601 duration'],
    ['R3/P1M', 'years or months'],
    ['R3/PT0.5S', 'more often than once a second'],
    ['0 0 * * *', 'no bounded cycle'],
    ['P1D', 'no bounded cycle'],
  ])('%j is refused: %s', (text, error) => {
    const parsed = parseCycle(text);
    expect(parsed.ok ? '' : parsed.error).toContain(error);
  });
});

describe('resolveTimer', () => {
  const literal = (type: TimerDefinition['type'], value: string): TimerDefinition => ({
    type,
    text: value,
    variable: null,
    value,
  });
  const variable = (type: TimerDefinition['type'], name: string, fallback: string | null): TimerDefinition => ({
    type,
    text: `\${${name}}`,
    variable: name,
    value: fallback,
  });

  test.each<
    [
      string,
      TimerDefinition,
      Record<string, unknown>,
      { dueAt: string; repetitionsLeft: number; intervalMs: number | null },
    ]
  >([
    [
      'a literal duration',
      literal('timeDuration', 'P14D'),
      {},
      { dueAt: '2026-12-15T10:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'a literal date',
      literal('timeDate', '2027-01-01T00:00:00+01:00'),
      {},
      { dueAt: '2026-12-31T23:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'a date in the past (due at once)',
      literal('timeDate', '2020-01-01T00:00:00Z'),
      {},
      { dueAt: '2020-01-01T00:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'a cycle: the first firing one interval after now',
      literal('timeCycle', 'R3/PT1H'),
      {},
      { dueAt: '2026-12-01T11:00:00.000Z', repetitionsLeft: 2, intervalMs: H },
    ],
    [
      "the variable's value",
      variable('timeDuration', 'deadline', 'P14D'),
      { deadline: 'PT30S' },
      { dueAt: '2026-12-01T10:00:30.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'the default when the variable is absent',
      variable('timeDuration', 'deadline', 'P14D'),
      {},
      { dueAt: '2026-12-15T10:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'the default when the variable is null',
      variable('timeDuration', 'deadline', 'P1D'),
      { deadline: null },
      { dueAt: '2026-12-02T10:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'a variable date',
      variable('timeDate', 'at', null),
      { at: '2026-12-01T12:00:00Z' },
      { dueAt: '2026-12-01T12:00:00.000Z', repetitionsLeft: 0, intervalMs: null },
    ],
    [
      'a variable cycle',
      variable('timeCycle', 'every', null),
      { every: 'R2/P1D' },
      { dueAt: '2026-12-02T10:00:00.000Z', repetitionsLeft: 1, intervalMs: D },
    ],
  ])('%s', (_name, def, variables, expected) => {
    const resolved = resolveTimer(def, variables, now);
    if (typeof resolved === 'string') throw new Error(resolved);
    expect({ ...resolved, dueAt: resolved.dueAt.toISOString() }).toEqual(expected);
  });

  test.each<[string, TimerDefinition, Record<string, unknown>, string]>([
    [
      'absent without default',
      variable('timeDuration', 'deadline', null),
      {},
      'variable deadline of timer ${deadline} is absent and the timer has no inbox:default',
    ],
    [
      'not a string',
      variable('timeDuration', 'deadline', 'P1D'),
      { deadline: 14 },
      'is a number, not an ISO 8601 text',
    ],
    ['an object', variable('timeDuration', 'deadline', 'P1D'), { deadline: { days: 1 } }, 'is a object'],
    [
      'an invalid duration',
      variable('timeDuration', 'deadline', 'P1D'),
      { deadline: 'P1M' },
      'variable deadline: duration "P1M" has years or months',
    ],
    [
      'a date without offset',
      variable('timeDate', 'at', null),
      { at: '2026-12-01T12:00:00' },
      'variable at: "2026-12-01T12:00:00" is no ISO 8601 date-time',
    ],
    [
      'an unbounded cycle',
      variable('timeCycle', 'every', null),
      { every: 'R/P1D' },
      'variable every: "R/P1D" is no bounded cycle',
    ],
    ['an inherited name is no variable', variable('timeDuration', 'toString', null), {}, 'is absent'],
  ])('%s: the error text', (_name, def, variables, error) => {
    const resolved = resolveTimer(def, variables, now);
    expect(typeof resolved === 'string' ? resolved : 'resolved').toContain(error);
  });
});
