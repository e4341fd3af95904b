/**
 * infra/monitoring/: valid files, metrics on logged fields, policies with
 * their runbook section, every alerting metric charted, and the app's
 * subscriptions filled in for the placeholders (json-tool fill, as deploy.sh
 * runs it), for the work-order example and for another app.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkSchemas, type SchemaKind } from '../../tools/gcloud-schema/schema';
import { headingAnchors, slug } from '../support/markdown';
import {
  appView,
  type AppView,
  CLAIMS_APP,
  DEFAULT_APP,
  FIXTURE_APP,
  jsonFiles,
  MONITORING,
  ROOT,
  sandbox,
  subscriptionsOf,
  useSandbox,
} from './helpers';

useSandbox();

describe('infra/monitoring files', () => {
  const files = jsonFiles(MONITORING);
  const parse = (file: string): Record<string, unknown> =>
    JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const metricNames = readdirSync(join(MONITORING, 'metrics')).map((f) => f.replace(/\.json$/, ''));

  it('are all valid JSON', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(() => parse(file)).not.toThrow();
  });

  it('name each log-based metric after its file and extract only fields the functions log', () => {
    const source = readSources(join(ROOT, 'functions', 'src'));
    for (const name of metricNames) {
      const metric = parse(join(MONITORING, 'metrics', `${name}.json`));
      expect(metric.name).toBe(name);
      expect(typeof metric.filter).toBe('string');
      for (const [, field] of JSON.stringify(metric).matchAll(/jsonPayload\.([A-Za-z]+)/g))
        expect(source).toContain(field);
    }
  });

  it('carry in each alert text what the on-call needs without the repository: what it means, the first command, the fix', () => {
    for (const file of readdirSync(join(MONITORING, 'policies'))) {
      const { documentation } = parse(join(MONITORING, 'policies', file)) as {
        documentation: { mimeType: string; content: string };
      };
      expect(documentation.mimeType).toBe('text/markdown');
      const sections = documentation.content.split('\n\n');
      expect({
        file,
        sections: sections.map((p) => /^\*\*(Means|First command|Fix)[^*]*\.\*\*|^Runbook: /.exec(p)?.[0]),
      }).toEqual({
        file,
        sections: ['**Means.**', '**First command.**', expect.stringMatching(/^\*\*Fix[^*]*\.\*\*$/), 'Runbook: '],
      });
      // The first command is there to copy: a code span.
      expect(sections[1]).toMatch(/`(npx inbox|gcloud) [^`]+`/);
      // No link that only opens inside the repository (a Markdown link to a relative path or an anchor).
      expect({ file, relativeLinks: documentation.content.match(/\]\((?!https?:)[^)]*\)/g) ?? [] }).toEqual({
        file,
        relativeLinks: [],
      });
      // The API's limit: 8,192 characters and 10,240 UTF-8 bytes.
      expect(documentation.content.length).toBeLessThanOrEqual(8_192);
      expect(Buffer.byteLength(documentation.content)).toBeLessThanOrEqual(10_240);
    }
  });

  it('point every alert policy at its runbook section, and use only metrics defined here', () => {
    const runbook = readFileSync(join(ROOT, 'docs', 'runbook.md'), 'utf8');
    const anchors = headingAnchors(runbook);
    const policies = readdirSync(join(MONITORING, 'policies'));
    expect(policies.length).toBeGreaterThanOrEqual(6);
    for (const file of policies) {
      const policy = parse(join(MONITORING, 'policies', file)) as {
        displayName?: string;
        documentation?: { content?: string };
        conditions?: unknown[];
      };
      expect(policy.displayName).toMatch(/^Inbox: /);
      expect(policy.conditions?.length).toBeGreaterThan(0);
      const content = policy.documentation?.content ?? '';
      // The section by name and anchor (deploy.sh --runbook-url makes the anchor a link).
      const pointer = /Runbook: section "([^"]+)" of docs\/runbook\.md \(docs\/runbook\.md#([a-z0-9-]+)\)\.$/.exec(
        content,
      );
      expect({ file, pointer: pointer !== null }).toEqual({ file, pointer: true });
      expect(slug(pointer?.[1] ?? '')).toBe(pointer?.[2]);
      expect(anchors.has(pointer?.[2] ?? '')).toBe(true);
      for (const [, anchor] of content.matchAll(/docs\/runbook\.md#([a-z0-9-]+)/g))
        expect({ file, anchor, inRunbook: anchors.has(anchor as string) }).toEqual({ file, anchor, inRunbook: true });
      expect(runbook).toContain(file);
    }
    for (const file of [
      ...policies.map((f) => join(MONITORING, 'policies', f)),
      ...jsonFiles(join(MONITORING, 'dashboards')),
    ]) {
      for (const [, used] of readFileSync(file, 'utf8').matchAll(/logging\.googleapis\.com\/user\/([a-z0-9_]+)/g)) {
        expect({
          file: relative(ROOT, file),
          metric: used,
          defined: metricNames.includes(used as string),
        }).toMatchObject({ defined: true });
      }
    }
  });
});

/** json-tool fill, as deploy.sh runs it: every monitoring file with the app's names put in, under a new directory. */
function fillFor(app: AppView & { readonly file: string }): { dir: string; stdout: string } {
  const dir = mkdtempSync(join(sandbox(), 'filled-'));
  const run = spawnSync('node', [join(ROOT, 'infra', 'lib', 'json-tool.js'), 'fill', app.file, MONITORING, dir], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`json-tool fill failed: ${run.stderr}`);
  return { dir, stdout: run.stdout };
}

describe("infra/monitoring against the APIs' schemas (gcloud's own message classes)", () => {
  const KINDS: Readonly<Record<string, SchemaKind>> = {
    metrics: 'log-metric',
    policies: 'alert-policy',
    dashboards: 'dashboard',
  };
  const kindOf = (file: string, dir: string = MONITORING): SchemaKind => {
    const kind = KINDS[relative(dir, file).split('/')[0] ?? ''];
    if (kind === undefined)
      throw new Error(`${relative(ROOT, file)}: no API message for this directory; add it to KINDS`);
    return kind;
  };

  it('decode without a type error, unknown field or unknown enum value, as gcloud decodes them before the API call', () => {
    const files = jsonFiles(MONITORING);
    const results = checkSchemas(files.map((file) => ({ kind: kindOf(file), file })));
    expect(results.map((r) => ({ file: relative(ROOT, r.file), errors: r.errors }))).toEqual(
      files.map((f) => ({ file: relative(ROOT, f), errors: [] })),
    );
  }, 120_000);

  it("decode as cleanly with an app's names filled in (what deploy.sh hands gcloud)", () => {
    const { dir } = fillFor(appView(FIXTURE_APP));
    const files = jsonFiles(dir);
    expect(files.length).toBe(jsonFiles(MONITORING).length);
    const results = checkSchemas(files.map((file) => ({ kind: kindOf(file, dir), file })));
    expect(results.map((r) => ({ file: relative(dir, r.file), errors: r.errors }))).toEqual(
      files.map((f) => ({ file: relative(dir, f), errors: [] })),
    );
  }, 120_000);

  it('the check finds what the decoder only sets aside: a bogus field and an enum value the API does not have', () => {
    const policy = JSON.parse(readFileSync(join(MONITORING, 'policies', 'push-refused.json'), 'utf8')) as {
      combiner: string;
      conditions: Array<Record<string, Record<string, unknown>>>;
    };
    policy.combiner = 'EITHER';
    (policy.conditions[1]?.conditionThreshold as Record<string, unknown>).thresholdVal = 0;
    const copy = join(sandbox(), 'broken-policy.json');
    writeFileSync(copy, JSON.stringify(policy));
    const [result] = checkSchemas([{ kind: 'alert-policy', file: copy }]);
    expect(result?.errors).toEqual([
      'AlertPolicy.combiner: invalid enum value (value "EITHER")',
      'AlertPolicy.conditions[1].conditionThreshold.thresholdVal: unknown field (value 0)',
    ]);
  }, 120_000);
});

describe('alerts and the dashboard', () => {
  /** Every metric type a file's filters name: log-based (logging.googleapis.com/user/…) and Google's own (pubsub.googleapis.com/…). */
  const metricsOf = (file: string): Set<string> =>
    new Set([...readFileSync(file, 'utf8').matchAll(/metric\.type=\\"([^"\\]+)\\"/g)].map((m) => m[1] as string));

  it('every metric an alert policy reads has a chart on the dashboard', () => {
    const charted = new Set(jsonFiles(join(MONITORING, 'dashboards')).flatMap((f) => [...metricsOf(f)]));
    const read = readdirSync(join(MONITORING, 'policies')).flatMap((file) =>
      [...metricsOf(join(MONITORING, 'policies', file))].map((metric) => ({ policy: file, metric })),
    );
    // Pub/Sub's own metrics are among them (the last-resort paths), not only our log-based ones.
    expect(read.map((r) => r.metric)).toEqual(
      expect.arrayContaining([
        'pubsub.googleapis.com/subscription/oldest_unacked_message_age',
        'pubsub.googleapis.com/subscription/num_undelivered_messages',
        'pubsub.googleapis.com/subscription/push_request_count',
        'logging.googleapis.com/user/inbox_push_rejections',
      ]),
    );
    for (const { policy, metric } of read)
      expect({ policy, metric, charted: charted.has(metric) }).toEqual({ policy, metric, charted: true });
  });

  it.each([
    ['documents-parked.json', 'inbox_gauge_parked'],
    ['incidents.json', 'inbox_gauge_open_incidents'],
  ])('%s alerts on the level (%s above 0), so it stays open while something is there', (file, gauge) => {
    const policy = JSON.parse(readFileSync(join(MONITORING, 'policies', file), 'utf8')) as {
      conditions: Array<{
        conditionThreshold?: {
          filter: string;
          comparison: string;
          thresholdValue: number;
          evaluationMissingData?: string;
        };
      }>;
    };
    const level = policy.conditions.find((c) =>
      c.conditionThreshold?.filter.includes(`/user/${gauge}"`),
    )?.conditionThreshold;
    expect(level).toMatchObject({
      comparison: 'COMPARISON_GT',
      thresholdValue: 0,
      evaluationMissingData: 'EVALUATION_MISSING_DATA_NO_OP',
    });
    // The event condition (new ones in the last 5 minutes) stays as a second condition.
    expect(policy.conditions.length).toBe(2);
    const metric = JSON.parse(readFileSync(join(MONITORING, 'metrics', `${gauge}.json`), 'utf8')) as {
      valueExtractor: string;
    };
    const field = /gauges\.([A-Za-z]+)/.exec(metric.valueExtractor)?.[1];
    expect(['parked', 'openIncidents']).toContain(field);
  });

  it('jobs-failed.json alerts on each new failure only: a FAILED job stays FAILED as a record, so a level on it would never close (the incident level covers the lasting state)', () => {
    const policy = JSON.parse(readFileSync(join(MONITORING, 'policies', 'jobs-failed.json'), 'utf8')) as {
      conditions: Array<{ conditionThreshold: { filter: string } }>;
    };
    expect(policy.conditions.map((c) => /user\/([a-z_]+)/.exec(c.conditionThreshold.filter)?.[1])).toEqual([
      'inbox_jobs_failed',
    ]);
  });
});

function readSources(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) =>
      e.isDirectory()
        ? readSources(join(dir, e.name))
        : e.name.endsWith('.ts')
          ? readFileSync(join(dir, e.name), 'utf8')
          : '',
    )
    .join('\n');
}

describe("the app's subscriptions, filled in for the placeholders (json-tool fill)", () => {
  /** The subscription ids a file's filters select: exact ones, and a regex's, tried on `candidates` as Cloud Monitoring's full match would. */
  function selected(text: string, candidates: readonly string[]): string[] {
    const ids = [...text.matchAll(/subscription_id=\\"([^"\\]+)\\"/g)].map((m) => m[1] as string);
    for (const [, pattern] of text.matchAll(/subscription_id=monitoring\.regex\.full_match\(\\"([^"\\]+)\\"\)/g)) {
      const full = new RegExp(`^(?:${pattern as string})$`);
      ids.push(...candidates.filter((c) => full.test(c)));
    }
    return ids;
  }

  it.each([DEFAULT_APP, CLAIMS_APP, FIXTURE_APP])(
    '%s: every subscription deploy.sh creates is watched, and nothing else',
    (folder) => {
      const app = appView(folder);
      const { dir } = fillFor(app);
      const deployed = subscriptionsOf(app.topology);
      const receiver = app.topology.inbound.map((i) => i.subscription);
      // What a regex must not take: each name with a character changed where a dot or a dash is (RE2's "." matches any).
      const nearMisses = deployed.flatMap((n) => [n.replace(/[.-]/, 'X'), `${n}x`, `x${n}`]);
      const named = new Map<string, Set<string>>();
      for (const file of jsonFiles(dir)) {
        const text = readFileSync(file, 'utf8');
        expect({ file: relative(dir, file), placeholders: text.match(/\{\{[^}]*\}\}/g) ?? [] }).toEqual({
          file: relative(dir, file),
          placeholders: [],
        });
        for (const id of selected(text, [...deployed, ...nearMisses]))
          named.set(id, (named.get(id) ?? new Set()).add(relative(dir, file)));
      }
      expect([...named.keys()].sort()).toEqual([...deployed].sort());
      for (const id of deployed)
        expect([...(named.get(id) ?? [])]).toEqual(
          expect.arrayContaining(['policies/push-not-acked.json', 'dashboards/inbox.json']),
        );
      // A message the receiver never acks is caught by age on every subscription that pushes to it.
      for (const id of receiver)
        expect([...(named.get(id) ?? [])]).toContain('policies/push-subscription-unacked.json');
      for (const id of [app.topology.deadLetter.subscription])
        expect([...(named.get(id) ?? [])]).toContain('policies/dead-letter-not-draining.json');
      // The alert texts name them too: the on-call reads which subscriptions are the app's.
      const texts = ['push-not-acked.json', 'push-subscription-unacked.json', 'push-refused.json'].map(
        (f) =>
          (JSON.parse(readFileSync(join(dir, 'policies', f), 'utf8')) as { documentation: { content: string } })
            .documentation.content,
      );
      for (const text of texts) for (const id of receiver) expect(text).toContain(id);
      const deadLettered = (
        JSON.parse(readFileSync(join(dir, 'policies', 'dead-lettered.json'), 'utf8')) as {
          documentation: { content: string };
        }
      ).documentation.content;
      expect(deadLettered).toContain(`the dead-letter topic ${app.topology.deadLetter.topic}.`);
    },
    60_000,
  );

  it('the unfilled files name no subscription or topic of any app: only placeholders', () => {
    const example = appView(DEFAULT_APP).topology;
    for (const file of jsonFiles(MONITORING)) {
      const text = readFileSync(file, 'utf8');
      for (const name of [...subscriptionsOf(example), example.deadLetter.topic])
        expect({ file: relative(ROOT, file), name, named: text.includes(name) }).toEqual({
          file: relative(ROOT, file),
          name,
          named: false,
        });
    }
  }, 60_000);

  it('an unknown placeholder stops the fill, naming the file and the known ones', () => {
    const src = mkdtempSync(join(sandbox(), 'bad-monitoring-'));
    writeFileSync(
      join(src, 'policy.json'),
      JSON.stringify({ displayName: 'x', documentation: { content: 'on {{PUSH_SUBSCRIPTION}}' } }),
    );
    const run = spawnSync(
      'node',
      [
        join(ROOT, 'infra', 'lib', 'json-tool.js'),
        'fill',
        appView(FIXTURE_APP).file,
        src,
        mkdtempSync(join(sandbox(), 'out-')),
      ],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `${join(src, 'policy.json')}: unknown placeholder {{PUSH_SUBSCRIPTION}}; known: {{PUSH_SUBSCRIPTIONS_REGEX}}, {{PUSH_SUBSCRIPTIONS}}`,
    );
  }, 60_000);
});
