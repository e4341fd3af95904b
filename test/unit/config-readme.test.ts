import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, DEFAULTS, loadConfig } from '../../functions/src/config';
import { tableUnder } from '../support/markdown';

/**
 * docs/configuration.md's "Variables" table against the configuration
 * itself: every variable loadConfig reads is listed, nothing else is, and
 * each variable with a default shows that default (and only those show
 * one). Nothing here is a copied list: the names are what loadConfig
 * reads, the defaults come from its DEFAULTS and from what it answers.
 */
const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
const REQUIRED_ONLY = { GOOGLE_CLOUD_PROJECT: 'p' };

/**
 * The variables loadConfig reads, recorded from the environment it is handed
 * (the schema is private to the module; reading its input is its whole list,
 * and also catches a variable read outside the schema).
 */
function variablesRead(): string[] {
  const read = new Set<string>();
  const env = new Proxy<NodeJS.ProcessEnv>(
    {},
    {
      get: (_target, key) => {
        if (typeof key === 'string') read.add(key);
        return undefined;
      },
    },
  );
  // Nothing is set, so GOOGLE_CLOUD_PROJECT is missing; every variable is still looked at.
  expect(() => loadConfig(env)).toThrow(ConfigError);
  return [...read].sort();
}

/** Each variable the table lists, with its default cell as written (a row may list several: `A`, `B` | `1`, `2`). */
function listed(): Array<{ name: string; shown: string }> {
  const { header, rows } = tableUnder(DOC, 'Variables');
  expect(header).toEqual(['variable', 'default', 'meaning']);
  return rows.flatMap(([variables = '', defaults = '']) => {
    const names = [...variables.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
    // The cell holds the names and nothing else, so no variable hides in prose.
    expect(names.map((n) => `\`${n}\``).join(', ')).toBe(variables);
    const shown = names.length === 1 ? [defaults] : defaults.split(', ');
    expect(shown).toHaveLength(names.length);
    return names.map((name, i) => ({ name, shown: shown[i] ?? '' }));
  });
}

/** A default cell that is a single code span (`` `8000` ``) claims that value; prose (`(required)`, `(unset)`) claims none. */
const literal = (shown: string): string | undefined => /^`([^`]*)`$/.exec(shown)?.[1];
const defaultOf = (name: string): string | undefined =>
  Object.hasOwn(DEFAULTS, name) ? String(DEFAULTS[name as keyof typeof DEFAULTS]) : undefined;

describe("docs/configuration.md's table of variables", () => {
  test('lists every variable loadConfig reads, each once, and nothing else', () => {
    const names = listed().map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(variablesRead());
  });

  test('shows the default of each variable that has one, and a value only for those', () => {
    const variables = variablesRead();
    const wrong = listed().flatMap(({ name, shown }) => {
      const expected = defaultOf(name);
      if (expected !== undefined)
        return shown === `\`${expected}\`` ? [] : [`${name}: shows ${shown}, the default is ${expected}`];
      const claimed = literal(shown);
      // Without a default of its own a variable may fall back to another one (`INBOX_TASKS_SERVICE_ACCOUNT`), never to a value.
      return claimed === undefined || variables.includes(claimed)
        ? []
        : [`${name}: shows ${shown}, but has no default`];
    });
    expect(wrong).toEqual([]);
  });

  // DEFAULTS is what the table is checked against: each entry must be a variable that is read, and the value it applies.
  test('each DEFAULTS entry is a variable loadConfig reads, and what it does when the variable is unset', () => {
    expect(variablesRead()).toEqual(expect.arrayContaining(Object.keys(DEFAULTS)));
    const unset = loadConfig(REQUIRED_ONLY);
    for (const [name, value] of Object.entries(DEFAULTS)) {
      expect({ name, config: loadConfig({ ...REQUIRED_ONLY, [name]: String(value) }) }).toEqual({
        name,
        config: unset,
      });
    }
  });
});
