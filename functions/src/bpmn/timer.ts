/**
 * The timer maths of the engine, pure: ISO 8601 texts to milliseconds and
 * dates. The parser checks literals and defaults with it when a model loads
 * (a ModelError), the engine resolves a timer with it when a token reaches
 * one (an INVALID_TIMER incident for a bad variable value). Only what a
 * server can compute without a calendar is accepted: weeks, days (24 hours),
 * hours, minutes and seconds; years and months are refused, and so are
 * unbounded cycles, cycles with a start date and cron.
 */
import type { TimerDefinition } from './model';
import { evaluateFeel } from './feel';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** The longest duration accepted: beyond it a date is a typo more likely than a plan (and Date arithmetic stays exact). */
export const MAX_DURATION_MS = 100 * 365 * DAY;
/** Most firings of a `timeCycle`. */
export const MAX_REPETITIONS = 1_000;
/** The shortest interval of a `timeCycle`: a shorter one would be a burst of Cloud Tasks, not a reminder. */
export const MIN_CYCLE_INTERVAL_MS = SECOND;

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}:\d{2})$/;
const CYCLE = /^R(\d+)\/(.*)$/;

/** A parse result: the value, or why the text is refused. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const refused = <T>(error: string): Parsed<T> => ({ ok: false, error });

/** Milliseconds of an ISO 8601 duration of weeks, days, hours, minutes and (fractional) seconds: `P14D`, `PT1.5S`, `P1W2DT3H`. */
export function parseDuration(text: string): Parsed<number> {
  const match = DURATION.exec(text);
  if (match === null || text === 'P' || text.endsWith('T')) {
    if (/^P[^T]*[YM]/.test(text)) {
      return refused(
        `duration "${text}" has years or months, whose length depends on the calendar: use weeks or days (P30D)`,
      );
    }
    return refused(
      `"${text}" is no ISO 8601 duration of weeks, days, hours, minutes and seconds (P14D, PT30S, P1DT12H)`,
    );
  }
  const [, weeks, days, hours, minutes, seconds] = match;
  const number = (part: string | undefined): number => (part === undefined ? 0 : Number(part.replace(',', '.')));
  const ms =
    number(weeks) * WEEK +
    number(days) * DAY +
    number(hours) * HOUR +
    number(minutes) * MINUTE +
    Math.round(number(seconds) * SECOND);
  if (!(ms <= MAX_DURATION_MS)) return refused(`duration "${text}" is longer than 100 years`);
  return ok(ms);
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** An ISO 8601 date-time with an offset or `Z`: `2026-12-24T18:00:00+01:00`. A local time without offset is refused (whose zone?). */
export function parseDateTime(text: string): Parsed<Date> {
  const match = DATE_TIME.exec(text);
  if (match === null) {
    return refused(
      `"${text}" is no ISO 8601 date-time with an offset or Z (2026-12-24T18:00:00Z, 2026-12-24T18:00:00+01:00)`,
    );
  }
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map((p) => Number(p ?? '0')) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [offsetHours, offsetMinutes] =
    zone === 'Z' || zone === undefined ? [0, 0] : [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 18 &&
    offsetMinutes <= 59;
  if (!valid) return refused(`"${text}" is no valid date-time (a field is out of range)`);
  const offset = (zone?.startsWith('-') === true ? -1 : 1) * (offsetHours * HOUR + offsetMinutes * MINUTE);
  const ms = Math.round(Number(`0.${fraction ?? '0'}`) * SECOND);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return ok(new Date(utc.getTime() - offset));
}

/** A repeating cycle `R<n>/<duration>`, n from 1 to {@link MAX_REPETITIONS}. */
export function parseCycle(text: string): Parsed<{ readonly repetitions: number; readonly intervalMs: number }> {
  const match = CYCLE.exec(text);
  const form =
    'only R<n>/<duration> is supported (R3/P1D: three firings a day apart); unbounded cycles, start dates and cron are not';
  if (match === null) return refused(`"${text}" is no bounded cycle: ${form}`);
  const [, count, durationText] = match as unknown as [string, string, string];
  const repetitions = Number(count);
  if (!(repetitions >= 1 && repetitions <= MAX_REPETITIONS))
    return refused(`cycle "${text}" repeats ${count} times; from 1 to ${MAX_REPETITIONS} are allowed`);
  const interval = parseDuration(durationText);
  if (!interval.ok) return refused(`cycle "${text}": ${interval.error}; ${form}`);
  if (interval.value < MIN_CYCLE_INTERVAL_MS) return refused(`cycle "${text}" repeats more often than once a second`);
  return ok({ repetitions, intervalMs: interval.value });
}

/** A start schedule: the first start, and how it repeats (`repetitions` null: for ever). */
export interface StartSchedule {
  readonly firstAt: Date;
  readonly intervalMs: number | null;
  /** Starts in all; null for an unbounded cycle (`R/…`). */
  readonly repetitions: number | null;
}

/**
 * The schedule of a timer start event first seen at `now`: `timeDate` once
 * at that date; `timeCycle` `R<n>/<duration>` or, for a start event only,
 * `R/<duration>` (unbounded), the first start one interval after `now`. A
 * duration has no anchor for a start and is refused.
 */
export function startSchedule(type: TimerDefinition['type'], text: string, now: Date): Parsed<StartSchedule> {
  if (type === 'timeDuration')
    return refused(`a timeDuration on a start event ("${text}") says no when: use timeDate, or timeCycle (R/P1D)`);
  if (type === 'timeDate') {
    const date = parseDateTime(text);
    return date.ok ? ok({ firstAt: date.value, intervalMs: null, repetitions: 1 }) : date;
  }
  const unbounded = /^R\/(.*)$/.exec(text);
  if (unbounded !== null) {
    const bounded = parseCycle(`R1/${unbounded[1] ?? ''}`);
    if (!bounded.ok) return refused(bounded.error.replace('R1/', 'R/'));
    return ok({
      firstAt: new Date(now.getTime() + bounded.value.intervalMs),
      intervalMs: bounded.value.intervalMs,
      repetitions: null,
    });
  }
  const cycle = parseCycle(text);
  if (!cycle.ok) return refused(`${cycle.error} (a start event also takes R/<duration>: for ever)`);
  return ok({
    firstAt: new Date(now.getTime() + cycle.value.intervalMs),
    intervalMs: cycle.value.intervalMs,
    repetitions: cycle.value.repetitions,
  });
}

/** When a timer set now is due, and how it repeats. */
export interface ResolvedTimer {
  readonly dueAt: Date;
  /** Firings after the first (a cycle's n - 1); 0 for a single timer. */
  readonly repetitionsLeft: number;
  /** A cycle's interval; null for a single timer. */
  readonly intervalMs: number | null;
}

/** Resolves a timer's text of `type`, set at `now`. */
export function resolveText(type: TimerDefinition['type'], text: string, now: Date): Parsed<ResolvedTimer> {
  switch (type) {
    case 'timeDuration': {
      const duration = parseDuration(text);
      return duration.ok
        ? ok({ dueAt: new Date(now.getTime() + duration.value), repetitionsLeft: 0, intervalMs: null })
        : duration;
    }
    case 'timeDate': {
      const date = parseDateTime(text);
      return date.ok ? ok({ dueAt: date.value, repetitionsLeft: 0, intervalMs: null }) : date;
    }
    case 'timeCycle': {
      const cycle = parseCycle(text);
      if (!cycle.ok) return cycle;
      const { repetitions, intervalMs } = cycle.value;
      return ok({ dueAt: new Date(now.getTime() + intervalMs), repetitionsLeft: repetitions - 1, intervalMs });
    }
  }
}

/**
 * When a timer reached at `now` is due: the literal, or the value of the
 * variable `${name}` (a string of the timer's form), or the model's default
 * when the variable is absent (undefined or null). A variable that is absent
 * without default, not a string or no valid text of the form gives the error
 * text the engine raises INVALID_TIMER with.
 */
export function resolveTimer(
  def: TimerDefinition,
  variables: Readonly<Record<string, unknown>>,
  now: Date,
): ResolvedTimer | string {
  let text: string;
  if (def.expression !== undefined) {
    // FEEL: a duration or date-time value (its ISO text), or a text of the timer's form.
    const result = evaluateFeel(def.expression, variables);
    if (!result.ok) return `${def.type}: ${result.error}`;
    if (typeof result.value !== 'string')
      return `${def.type} ${def.text} gave ${JSON.stringify(result.value)}, not a duration, date-time or cycle`;
    const resolved = resolveText(def.type, result.value, now);
    return resolved.ok ? resolved.value : `${def.type} ${def.text} gave "${result.value}": ${resolved.error}`;
  }
  if (def.variable === null) {
    if (def.value === null) return `timer ${def.text} has no value`;
    text = def.value;
  } else {
    const value = Object.prototype.hasOwnProperty.call(variables, def.variable) ? variables[def.variable] : undefined;
    if (value === undefined || value === null) {
      if (def.value === null)
        return `variable ${def.variable} of timer ${def.text} is absent and the timer has no inbox:default`;
      text = def.value;
    } else if (typeof value !== 'string') {
      return `variable ${def.variable} of timer ${def.text} is a ${typeof value}, not an ISO 8601 text`;
    } else {
      text = value;
    }
  }
  const resolved = resolveText(def.type, text, now);
  if (!resolved.ok) return def.variable === null ? resolved.error : `variable ${def.variable}: ${resolved.error}`;
  return resolved.value;
}
