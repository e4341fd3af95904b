/**
 * The storage section of infra/deploy.sh (infra/lib/storage.sh), in real
 * mode, run by the real Google Cloud CLI against a local stand-in of the
 * Cloud Storage and IAM APIs: gcloud's own flag parsing, lifecycle-file
 * reading and IAM read-modify-write build the requests. A new project, a
 * rerun, a bucket that drifted, and a sender's bucket that is not there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RealGcloud, realGcloud, requireGcloud } from '../support/real-gcloud';
import { type StorageApiStandIn, startStorageApiStandIn } from '../support/storage-api-standin';
import { PROJECT, REGION, ROOT, sa, sandbox, useSandbox } from './helpers';

useSandbox();

const TOKEN = 'ya29.storage-rehearsal';
const PAYLOAD_BUCKET = `${PROJECT}-inbox-payloads`;
const SENDERS = ['sender-a-reports', 'sender-b-reports'];
const LIFECYCLE = JSON.parse(readFileSync(join(ROOT, 'infra', 'storage', 'payload-lifecycle.json'), 'utf8')) as {
  rule: unknown[];
};
const SWEEPER = `projects/${PROJECT}/roles/inboxPayloadSweeper`;
const WRITER = `projects/${PROJECT}/roles/inboxPayloadWriter`;

/** The deploy's storage section exactly as deploy.sh runs it (its libraries, its order), in real mode. */
const SECTION = String.raw`set -euo pipefail
usage_error() { printf 'error: %s\n' "$1" >&2; exit 2; }
source infra/lib/common.sh
source infra/lib/storage.sh
PROJECT=${PROJECT} REGION=${REGION} DRY_RUN=false INFRA_DIR=$PWD/infra REPO_ROOT=$PWD
WORK_DIR=$(mktemp -d)
trap 'rm -rf "$WORK_DIR"' EXIT
init_service_account_names
validate_storage_settings
setup_storage`;

describe('infra/lib/storage.sh with the real gcloud against a stand-in Storage and IAM API', () => {
  let standIn: StorageApiStandIn;
  let gcloud: RealGcloud;
  let section = '';
  const run = (referenceBuckets: string): ReturnType<RealGcloud['run']> =>
    gcloud.run(`REFERENCE_BUCKETS='${referenceBuckets}' bash '${section}'`, ROOT);
  const member = (name: string): string => `serviceAccount:${sa(name)}`;
  const bindings = (bucket: string): string[] =>
    (standIn.policies.get(bucket) ?? []).flatMap((b) => b.members.map((m) => `${b.role} ${m}`)).sort();
  const sender = (name: string): void =>
    void standIn.buckets.set(name, {
      name,
      location: 'EU',
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true } },
    });

  beforeAll(async () => {
    requireGcloud();
    standIn = await startStorageApiStandIn(TOKEN);
    gcloud = realGcloud(standIn.url, TOKEN, ['storage', 'iam']);
    section = join(sandbox(), 'storage-section.sh');
    writeFileSync(section, SECTION);
    for (const name of SENDERS) sender(name);
  });

  afterAll(async () => {
    await standIn.close();
  });

  it('a new project: creates the bucket with its settings and lifecycle, the sweeper role, and each binding', async () => {
    const first = await run(SENDERS.join(','));
    expect({ status: first.status, stderr: first.status === 0 ? '' : first.stderr }).toEqual({ status: 0, stderr: '' });
    const created = standIn.writes.filter((w) => w.call === 'POST /storage/v1/b');
    expect(created).toHaveLength(1);
    expect(created[0]?.body).toEqual({
      name: PAYLOAD_BUCKET,
      location: REGION,
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: 'enforced' },
      softDeletePolicy: { retentionDurationSeconds: '604800' },
      lifecycle: LIFECYCLE,
    });
    expect(standIn.roles.get(SWEEPER)).toMatchObject({
      includedPermissions: ['storage.objects.get', 'storage.objects.list', 'storage.objects.delete'],
      stage: 'GA',
    });
    expect(standIn.roles.get(WRITER)).toMatchObject({
      includedPermissions: ['storage.objects.create', 'storage.objects.get'],
      stage: 'GA',
    });
    // The console reads offloaded payloads to show them (inboxConsole's own account, read only).
    expect(bindings(PAYLOAD_BUCKET)).toEqual(
      [
        `${WRITER} ${member('inbox-receiver')}`,
        `${SWEEPER} ${member('inbox-jobs')}`,
        `roles/storage.objectViewer ${member('inbox-console')}`,
      ].sort(),
    );
    // The senders' buckets: read access for the relay and the jobs, nothing created, no setting changed.
    for (const name of SENDERS)
      expect(bindings(name)).toEqual([
        `roles/storage.objectViewer ${member('inbox-jobs')}`,
        `roles/storage.objectViewer ${member('inbox-relay')}`,
      ]);
    expect(standIn.writes.filter((w) => w.call !== 'POST /storage/v1/b')).toEqual([]);
    expect(standIn.unexpected).toEqual([]);
  }, 180_000);

  it('a rerun changes nothing: no create, no bucket update, the same bindings once each', async () => {
    const writesBefore = standIn.writes.length;
    const again = await run(SENDERS.join(','));
    expect({ status: again.status, stderr: again.status === 0 ? '' : again.stderr }).toEqual({ status: 0, stderr: '' });
    expect(again.stdout).toContain(`# bucket gs://${PAYLOAD_BUCKET} exists with its settings`);
    expect(standIn.writes.slice(writesBefore)).toEqual([]);
    expect(bindings(PAYLOAD_BUCKET)).toHaveLength(3);
    for (const name of SENDERS) expect(bindings(name)).toHaveLength(2);
    // The roles are set again (their permission lists are the script's), not created a second time.
    expect(standIn.calls.filter((c) => c === `PATCH /v1/${SWEEPER}`)).toHaveLength(1);
    expect(standIn.calls.filter((c) => c === `PATCH /v1/${WRITER}`)).toHaveLength(1);
    expect(standIn.unexpected).toEqual([]);
  }, 180_000);

  it('a bucket that drifted: only what drifted is updated (public access prevention and the lifecycle here)', async () => {
    const bucket = standIn.buckets.get(PAYLOAD_BUCKET);
    const iam = { ...(bucket?.iamConfiguration as Record<string, unknown>), publicAccessPrevention: 'inherited' };
    standIn.buckets.set(PAYLOAD_BUCKET, {
      ...bucket,
      name: PAYLOAD_BUCKET,
      iamConfiguration: iam,
      lifecycle: { rule: [{ action: { type: 'Delete' }, condition: { age: 30 } }] },
    });
    const writesBefore = standIn.writes.length;
    const drifted = await run(SENDERS.join(','));
    expect({ status: drifted.status, stderr: drifted.status === 0 ? '' : drifted.stderr }).toEqual({
      status: 0,
      stderr: '',
    });
    const patches = standIn.writes.slice(writesBefore);
    expect(patches.map((p) => p.call)).toEqual([`PATCH /storage/v1/b/${PAYLOAD_BUCKET}`]);
    expect(patches[0]?.body).toEqual({
      name: PAYLOAD_BUCKET,
      iamConfiguration: { publicAccessPrevention: 'enforced' },
      lifecycle: LIFECYCLE,
    });
    // The rule that deleted live objects after 30 days is gone.
    expect(standIn.buckets.get(PAYLOAD_BUCKET)?.lifecycle).toEqual(LIFECYCLE);
  }, 180_000);

  it("a sender's bucket that does not exist stops the deploy with what to do, and is never created", async () => {
    const missing = 'sender-c-gone';
    const result = await run(`${SENDERS[0] ?? ''},${missing}`);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`REFERENCE_BUCKETS: gs://${missing} cannot be read`);
    expect(result.stderr).toContain('This script never creates it');
    expect(standIn.buckets.has(missing)).toBe(false);
    expect(standIn.writes.filter((w) => w.body.name === missing)).toEqual([]);
  }, 180_000);
});
