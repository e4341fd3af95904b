/**
 * infra/deploy.sh in real mode, driven by a fake gcloud and a fake curl (no
 * Google Cloud): "create if missing, else update", and a failed rules
 * deployment stops the run.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkSchemas } from '../../tools/gcloud-schema/schema';
import {
  deployEnv,
  FIXTURE_APP,
  FUNCTIONS,
  INDEXES,
  MONITORING,
  PROJECT,
  ROOT,
  sandbox,
  SCRIPT,
  TTL_FIELDS,
  useSandbox,
} from './helpers';

useSandbox();

/**
 * A fake gcloud for the real mode: SCENARIO=fresh (nothing exists) or
 * existing (everything does, one index and the TTL included; but no alert
 * policy whose list filter holds FAKE_POLICY_GONE, when set). It logs every
 * call and answers the look-ups the script makes.
 */
const FAKE_GCLOUD = String.raw`#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
args="$*"
fn=$3
case "$args" in
  "projects describe"*) echo 123456789 ;;
  "functions describe"*)
    if [[ $SCENARIO == existing || -f "$FAKE_STATE/deployed-$fn" ]]; then echo "https://$(printf '%s' "$fn" | tr '[:upper:]' '[:lower:]')-abc-ew.a.run.app"; else exit 1; fi ;;
  "functions deploy"*) touch "$FAKE_STATE/deployed-$fn" ;;
  "firestore indexes composite list"*)
    if [[ $SCENARIO == existing ]]; then
      echo '[{"name":"projects/p/databases/(default)/collectionGroups/inbox/indexes/A1","queryScope":"COLLECTION","fields":[{"fieldPath":"shard","order":"ASCENDING"},{"fieldPath":"status","order":"ASCENDING"},{"fieldPath":"nextAttemptAt","order":"ASCENDING"},{"fieldPath":"__name__","order":"ASCENDING"}]}]'
    else echo '[]'; fi ;;
  "firestore indexes fields describe"*) if [[ $SCENARIO == existing ]]; then echo ACTIVE; fi ;;
  "alpha monitoring policies list"*) if [[ $SCENARIO == existing && ( -z $FAKE_POLICY_GONE || $args != *"$FAKE_POLICY_GONE"* ) ]]; then echo projects/p/alertPolicies/42; fi ;;
  "alpha monitoring policies describe"*) echo '{"notificationChannels":["projects/p/notificationChannels/7"]}' ;;
  "alpha monitoring policies"*) for a in "$@"; do case $a in --policy-from-file=*) cat "$(printf '%s' "$a" | cut -d= -f2-)" >> "$FAKE_STATE/policies.json" ;; esac; done ;;
  "monitoring dashboards list"*) if [[ $SCENARIO == existing ]]; then echo projects/1/dashboards/d1; fi ;;
  "monitoring dashboards describe"*) echo etag-1 ;;
  "auth print-access-token"*) echo fake-token ;;
  # An existing project still has the bindings an earlier version granted (fast-path tasks signed as inbox-tasks).
  "run services get-iam-policy relayinbox"*) if [[ $SCENARIO == existing ]]; then echo '{"bindings":[{"role":"roles/run.invoker","members":["serviceAccount:inbox-tasks@demo-proj.iam.gserviceaccount.com"]}]}'; else echo '{"etag":"ACAB"}'; fi ;;
  "iam service-accounts get-iam-policy inbox-tasks@"*) if [[ $SCENARIO == existing ]]; then echo '{"bindings":[{"role":"roles/iam.serviceAccountUser","members":["serviceAccount:inbox-receiver@demo-proj.iam.gserviceaccount.com","serviceAccount:inbox-jobs@demo-proj.iam.gserviceaccount.com"]}]}'; else echo '{"etag":"ACAB"}'; fi ;;
  # An existing payload bucket as the API describes it (--raw), with every setting the script wants.
  "storage buckets describe gs://demo-proj-inbox-payloads "*)
    if [[ $SCENARIO == existing ]]; then echo '{"name":"demo-proj-inbox-payloads","location":"EUROPE-WEST1","iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true},"publicAccessPrevention":"enforced"},"softDeletePolicy":{"retentionDurationSeconds":"604800"},"lifecycle":{"rule":[{"condition":{"age":1},"action":{"type":"AbortIncompleteMultipartUpload"}},{"action":{"type":"Delete"},"condition":{"daysSinceNoncurrentTime":1,"isLive":false}}]}}'; else exit 1; fi ;;
  *" describe "*) if [[ $SCENARIO != existing ]]; then exit 1; fi ;;
esac
exit 0
`;

/**
 * A fake curl for the Firebase Rules API: logs "curl METHOD URL TOKEN-HEADER BODY",
 * answers a ruleset create with its name, a GET of the release with 200 when
 * SCENARIO=existing (404 otherwise), and FAKE_RULES_STATUS (default 200) to
 * the rest.
 */
const FAKE_CURL = String.raw`#!/usr/bin/env bash
out=/dev/null method=GET url= auth= body=
while [[ $# -gt 0 ]]; do
  case $1 in
    -o) out=$2; shift ;;
    -X) method=$2; shift ;;
    -w) shift ;;
    -H) [[ $2 == Authorization:* ]] && auth="$2 (ON THE COMMAND LINE)"; [[ $2 == @* ]] && auth=$(head -n1 "$(printf '%s' "$2" | cut -c2-)"); shift ;;
    --data-binary) body=$(cat "$(printf '%s' "$2" | cut -c2-)"); shift ;;
    http*) url=$1 ;;
  esac
  shift
done
echo "curl $method $url [$auth] $body" >> "$FAKE_LOG"
status=$FAKE_RULES_STATUS; [[ -n $status ]] || status=200
case "$method $url" in
  "GET "*) if [[ $SCENARIO == existing ]]; then status=200; else status=404; fi; echo '{}' > "$out" ;;
  "POST "*/rulesets) if [[ $status == 200 ]]; then echo '{"name":"projects/demo-proj/rulesets/rs-1"}' > "$out"; else echo '{"error":{"message":"The caller does not have permission"}}' > "$out"; fi ;;
  *) echo '{}' > "$out" ;;
esac
printf '%s' "$status"
`;

describe('deploy.sh against a fake gcloud (create if missing, else update)', () => {
  function realRun(
    scenario: 'fresh' | 'existing',
    env: NodeJS.ProcessEnv = {},
    args: readonly string[] = [],
  ): { calls: string[]; stdout: string; stderr: string; status: number | null; policies: string } {
    const dir = mkdtempSync(join(sandbox(), `${scenario}-`));
    for (const [tool, script] of [
      ['gcloud', FAKE_GCLOUD],
      ['curl', FAKE_CURL],
    ] as const) {
      writeFileSync(join(dir, tool), script);
      chmodSync(join(dir, tool), 0o755);
    }
    const log = join(dir, 'calls.log');
    const result = spawnSync('bash', [SCRIPT, '--project', PROJECT, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({
        PATH: `${dir}:${dirname(process.execPath)}:/usr/bin:/bin`,
        SCENARIO: scenario,
        FAKE_LOG: log,
        FAKE_STATE: dir,
        ...env,
      }),
      timeout: 60_000,
    });
    const policies = existsSync(join(dir, 'policies.json')) ? readFileSync(join(dir, 'policies.json'), 'utf8') : '';
    return {
      calls: readFileSync(log, 'utf8').trim().split('\n'),
      stdout: result.stdout,
      stderr: result.stderr,
      status: result.status,
      policies,
    };
  }

  it('creates everything in a new project, deploying each function twice (URLs exist only after the first deploy)', () => {
    const { calls, status, stderr } = realRun('fresh');
    expect({ status, stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    for (const fn of FUNCTIONS) {
      const deploys = calls.filter((c) => c.startsWith(`functions deploy ${fn} `));
      expect(deploys).toHaveLength(2);
      expect(deploys[0]).toContain(`INBOX_PUSH_AUDIENCE=https://pending.invalid/${fn}`);
      expect(deploys[1]).toContain(`INBOX_PUSH_AUDIENCE=https://${fn.toLowerCase()}-abc-ew.a.run.app`);
    }
    expect(calls.filter((c) => c.startsWith('firestore indexes composite create '))).toHaveLength(
      INDEXES.indexes.length,
    );
    expect(calls.filter((c) => c.startsWith('storage buckets create gs://demo-proj-inbox-payloads '))).toHaveLength(1);
    // One TTL per "ttl": true field override (inbox.expireAt), looked up first.
    const ttls = calls.filter((c) => c.startsWith('firestore fields ttls update '));
    expect(ttls).toHaveLength(TTL_FIELDS.length);
    expect(TTL_FIELDS.length).toBeGreaterThan(0);
    for (const o of TTL_FIELDS) {
      expect(
        ttls.filter(
          (c) =>
            c.startsWith(`firestore fields ttls update ${o.fieldPath} `) &&
            c.includes(` --collection-group=${o.collectionGroup} `) &&
            c.includes(' --enable-ttl'),
        ),
      ).toHaveLength(1);
      expect(
        calls.some(
          (c) =>
            c.startsWith(`firestore indexes fields describe ${o.fieldPath} `) &&
            c.includes(` --collection-group=${o.collectionGroup} `),
        ),
      ).toBe(true);
    }
    for (const sub of ['work-order-completed-push', 'work-order-released-push']) {
      expect(
        calls.filter(
          (c) =>
            c.startsWith(`pubsub subscriptions create ${sub} `) &&
            c.includes('--push-endpoint=https://receivepubsubpush-abc-ew.a.run.app') &&
            c.includes(' --labels=inbox-app=work-orders '),
        ),
      ).toHaveLength(1);
    }
    expect(calls.some((c) => c.includes('service-123456789@gcp-sa-pubsub.iam.gserviceaccount.com'))).toBe(true);
    expect(calls.filter((c) => c.startsWith('alpha monitoring policies create '))).toHaveLength(
      readdirSync(join(MONITORING, 'policies')).length,
    );
    // The rules: a ruleset with the content of firestore.rules, then a new release pointing at it.
    const rules = calls.filter((c) => c.startsWith('curl '));
    expect(rules).toHaveLength(3);
    expect(rules[0]).toContain(
      `curl POST https://firebaserules.googleapis.com/v1/projects/${PROJECT}/rulesets [Authorization: Bearer fake-token] `,
    );
    expect(JSON.parse(rules[0]!.slice(rules[0]!.indexOf('] ') + 2))).toEqual({
      source: { files: [{ name: 'firestore.rules', content: readFileSync(join(ROOT, 'firestore.rules'), 'utf8') }] },
    });
    expect(rules[1]).toContain(
      `curl GET https://firebaserules.googleapis.com/v1/projects/${PROJECT}/releases/cloud.firestore `,
    );
    expect(rules[2]).toContain(
      `curl POST https://firebaserules.googleapis.com/v1/projects/${PROJECT}/releases [Authorization: Bearer fake-token] {"name":"projects/${PROJECT}/releases/cloud.firestore","rulesetName":"projects/demo-proj/rulesets/rs-1"}`,
    );
    // A new project has no binding of an earlier version to remove.
    expect(calls.filter((c) => c.includes('remove-'))).toEqual([]);
  }, 60_000);

  it("with --app: creates that app's topics and subscriptions, and hands gcloud monitoring files with its subscriptions filled in", () => {
    const { calls, status, stderr, policies } = realRun('fresh', {}, ['--app', FIXTURE_APP]);
    expect({ status, stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    expect(
      calls
        .filter((c) => c.startsWith('pubsub subscriptions create '))
        .map((c) => c.split(' ')[3])
        .sort(),
    ).toEqual(['minimal-dlt-push', 'minimal-start-push', 'minimal.answers-inbox']);
    expect(calls.filter((c) => /work[\s_-]?order/i.test(c))).toEqual([]);
    // What gcloud read: every placeholder filled, the app's subscriptions selected (a dot matched as a dot).
    expect(policies).not.toContain('{{');
    expect(policies).toContain('monitoring.regex.full_match(\\"minimal-start-push|minimal[.]answers-inbox\\")');
    expect(policies).toContain('resource.label.subscription_id=\\"minimal-dlt-push\\"');
    for (const file of readdirSync(join(MONITORING, 'policies')))
      expect(policies).toContain(
        JSON.parse(readFileSync(join(MONITORING, 'policies', file), 'utf8')).displayName as string,
      );
  }, 60_000);

  it('never puts the access token on a command line (ps and /proc show every argument)', () => {
    const { calls } = realRun('fresh');
    const curls = calls.filter((c) => c.startsWith('curl '));
    expect(curls.length).toBeGreaterThan(0);
    // The fake curl tags a header given as an argument; a header file (-H @FILE) is read and shown plainly.
    for (const c of curls) expect(c).not.toContain('ON THE COMMAND LINE');
    for (const c of curls.filter((x) => !x.startsWith('curl GET ')))
      expect(c).toContain('[Authorization: Bearer fake-token]');
  }, 60_000);

  it('--runbook-url: the policies gcloud receives link each runbook reference to URL#anchor and carry the section as their link', () => {
    const url = 'https://github.com/example/inbox/blob/main/docs/runbook.md';
    const sent = (
      run: ReturnType<typeof realRun>,
    ): Array<{ displayName: string; documentation: { content: string; links?: unknown } }> =>
      run.policies
        .split(/\n(?=\{\n)/)
        .map(
          (text) => JSON.parse(text) as { displayName: string; documentation: { content: string; links?: unknown } },
        );
    const plain = sent(realRun('fresh'));
    const linked = sent(realRun('fresh', {}, [`--runbook-url=${url}`]));
    expect(linked).toHaveLength(readdirSync(join(MONITORING, 'policies')).length);
    for (const [i, policy] of linked.entries()) {
      const anchor = /docs\/runbook\.md#([a-z0-9-]+)\)\.$/.exec(plain[i]?.documentation.content ?? '')?.[1];
      expect(plain[i]?.documentation.links).toBeUndefined();
      expect(policy.documentation.content).toContain(`(${url}#${anchor})`);
      expect(policy.documentation.content.match(/\]\(([^)]+)\)/g)?.every((link) => link.startsWith(`](${url}#`))).toBe(
        true,
      );
      expect(policy.documentation.links).toEqual([
        { displayName: expect.stringMatching(/^Runbook: Alert: .{1,45}$/), url: `${url}#${anchor}` },
      ]);
    }
    // What gcloud receives still decodes cleanly into its AlertPolicy message (documentation.links included).
    const files = linked.map((policy, i) => {
      const file = join(sandbox(), `sent-policy-${i}.json`);
      writeFileSync(file, JSON.stringify(policy));
      return { kind: 'alert-policy' as const, file };
    });
    expect(checkSchemas(files).flatMap((r) => r.errors)).toEqual([]);
  }, 120_000);

  it('stops with what to do when the rules cannot be deployed', () => {
    const { status, stderr, calls } = realRun('fresh', { FAKE_RULES_STATUS: '403', RULES_RETRY_SECONDS: '0' });
    expect(status).toBe(1);
    // Retried (a just-enabled API answers 403 for a while), then given up.
    expect(
      calls.filter((c) =>
        c.startsWith(`curl POST https://firebaserules.googleapis.com/v1/projects/${PROJECT}/rulesets `),
      ),
    ).toHaveLength(4);
    expect(stderr).toContain('creating the ruleset from firestore.rules failed (HTTP 403, 4 attempts)');
    expect(stderr).toContain('The caller does not have permission');
    expect(stderr).toContain('roles/firebaserules.admin');
    // Nothing after the rules ran.
    expect(calls.some((c) => c.startsWith('functions deploy '))).toBe(false);
  }, 60_000);

  it('updates instead of creating when everything exists, and keeps the alert channels set by hand', () => {
    const { calls, policies } = realRun('existing');
    const creates = calls.filter(
      (c) =>
        / create( |$)/.test(c) &&
        !c.startsWith('firestore indexes composite create ') &&
        !c.startsWith('beta services identity create '),
    );
    expect(creates).toEqual([]);
    // The payload bucket has its settings (key order differs from the file's): no update either.
    expect(calls.filter((c) => c.startsWith('storage buckets update '))).toEqual([]);
    for (const fn of FUNCTIONS) expect(calls.filter((c) => c.startsWith(`functions deploy ${fn} `))).toHaveLength(1);
    // Only the indexes that are not there yet (the fake has the first one).
    expect(calls.filter((c) => c.startsWith('firestore indexes composite create '))).toHaveLength(
      INDEXES.indexes.length - 1,
    );
    // The TTLs are ACTIVE in this project: looked up, left alone.
    expect(calls.some((c) => c.startsWith('firestore fields ttls update'))).toBe(false);
    for (const o of TTL_FIELDS)
      expect(calls.some((c) => c.startsWith(`firestore indexes fields describe ${o.fieldPath} `))).toBe(true);
    // An upgrade labels the subscriptions with the app, adding to whatever labels they have.
    for (const c of calls.filter((x) => x.startsWith('pubsub subscriptions update ')))
      expect(c).toContain(' --update-labels=inbox-app=work-orders ');
    for (const prefix of [
      'pubsub subscriptions update work-order-completed-push ',
      'pubsub subscriptions update work-order-released-push ',
      'pubsub subscriptions update work-order-completed-dlt-push ',
      'tasks queues update process-jobs ',
      'tasks queues update process-timers ',
      'tasks queues update inbox-relay ',
      'scheduler jobs update http inbox-relay ',
      'scheduler jobs update http inbox-sweep-jobs ',
      'monitoring dashboards update projects/1/dashboards/d1 ',
    ]) {
      expect(calls.some((c) => c.startsWith(prefix))).toBe(true);
    }
    expect(calls.filter((c) => c.startsWith('logging metrics update '))).toHaveLength(
      readdirSync(join(MONITORING, 'metrics')).length,
    );
    expect(
      calls.filter((c) => c.startsWith('alpha monitoring policies update projects/p/alertPolicies/42 ')),
    ).toHaveLength(readdirSync(join(MONITORING, 'policies')).length);
    expect(policies).toContain('projects/p/notificationChannels/7');
    // The bindings an earlier version granted are removed: the receiver may no longer act as the job tasks' account,
    // and that account may no longer invoke relayInbox (the fast path has its own).
    expect(calls.filter((c) => c.includes('remove-')).map((c) => c.replace(/ --project=.*$/, ''))).toEqual([
      'iam service-accounts remove-iam-policy-binding inbox-tasks@demo-proj.iam.gserviceaccount.com --member=serviceAccount:inbox-receiver@demo-proj.iam.gserviceaccount.com --role=roles/iam.serviceAccountUser --format=none',
      'functions remove-invoker-policy-binding relayInbox --region=europe-west1 --member=serviceAccount:inbox-tasks@demo-proj.iam.gserviceaccount.com --format=none',
    ]);
    // An existing release is updated to the new ruleset.
    expect(calls.filter((c) => c.startsWith('curl ')).at(-1)).toContain(
      `curl PATCH https://firebaserules.googleapis.com/v1/projects/${PROJECT}/releases/cloud.firestore [Authorization: Bearer fake-token] {"release":{"name":"projects/${PROJECT}/releases/cloud.firestore","rulesetName":"projects/demo-proj/rulesets/rs-1"},"updateMask":"rulesetName"}`,
    );
  }, 60_000);

  it('finds a policy an earlier version named otherwise under its former name, and renames it in place instead of adding a second', () => {
    const { calls, status } = realRun('existing', { FAKE_POLICY_GONE: 'Inbox: push message unacked' });
    expect(status).toBe(0);
    expect(
      calls.filter(
        (c) =>
          c.startsWith('alpha monitoring policies list ') &&
          c.includes('Inbox: completion message unacked for more than 15 minutes'),
      ),
    ).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('alpha monitoring policies create '))).toEqual([]);
    expect(
      calls.filter((c) => c.startsWith('alpha monitoring policies update projects/p/alertPolicies/42 ')),
    ).toHaveLength(readdirSync(join(MONITORING, 'policies')).length);
  }, 60_000);
});
