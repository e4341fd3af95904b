/**
 * The claim check's part of infra/deploy.sh, without Google Cloud: the
 * payload bucket, the storage grants and the settings passed to the
 * functions, as the dry run prints them (the real gcloud runs the same
 * section against a stand-in in storage-rehearsal.test.ts).
 */
import { execFileSync } from 'node:child_process';
import {
  commandsOf,
  deploy,
  envOf,
  fakeTools,
  flag,
  FUNCTIONS,
  only,
  PROJECT,
  REGION,
  ROOT,
  sa,
  SCRIPT,
  useSandbox,
} from './helpers';

useSandbox();

describe('deploy.sh --dry-run: Cloud Storage', () => {
  let commands: string[];

  beforeAll(() => {
    const tools = fakeTools();
    commands = commandsOf(
      execFileSync('bash', [SCRIPT, '--project', PROJECT, '--region', REGION, '--dry-run'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${tools.bin}:${process.env.PATH ?? ''}` },
        timeout: 60_000,
      }),
    );
  }, 60_000);

  it('creates the payload bucket private, with soft delete and the lifecycle file, before any function is deployed', () => {
    const create = only(
      commands,
      (c) => c.startsWith(`gcloud storage buckets create gs://${PROJECT}-inbox-payloads `),
      'payload bucket',
    );
    expect(flag(create, 'location')).toBe(REGION);
    expect(create).toContain(' --uniform-bucket-level-access ');
    expect(create).toContain(' --public-access-prevention ');
    expect(flag(create, 'soft-delete-duration')).toBe('7d');
    expect(flag(create, 'lifecycle-file')).toBe('infra/storage/payload-lifecycle.json');
    expect(commands.indexOf(create)).toBeLessThan(commands.findIndex((c) => c.startsWith('gcloud functions deploy ')));
  });

  it('grants each identity its storage role on the payload bucket, and no other storage grant without REFERENCE_BUCKETS', () => {
    const grants = commands
      .filter((c) => c.startsWith('gcloud storage buckets add-iam-policy-binding '))
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''} ${flag(c, 'role') ?? ''}`);
    const bucket = `gs://${PROJECT}-inbox-payloads`;
    expect(grants.sort()).toEqual(
      [
        `${bucket} serviceAccount:${sa('inbox-receiver')} projects/${PROJECT}/roles/inboxPayloadWriter`,
        `${bucket} serviceAccount:${sa('inbox-jobs')} projects/${PROJECT}/roles/inboxPayloadSweeper`,
        // The console shows offloaded payloads: read only.
        `${bucket} serviceAccount:${sa('inbox-console')} roles/storage.objectViewer`,
      ].sort(),
    );
    const role = only(commands, (c) => c.startsWith('gcloud iam roles create inboxPayloadSweeper '), 'sweeper role');
    expect(flag(role, 'permissions')?.split(',').sort()).toEqual([
      'storage.objects.delete',
      'storage.objects.get',
      'storage.objects.list',
    ]);
    // The receiver creates and reads metadata; it cannot list, download in bulk, overwrite or delete.
    const writer = only(commands, (c) => c.startsWith('gcloud iam roles create inboxPayloadWriter '), 'writer role');
    expect(flag(writer, 'permissions')?.split(',').sort()).toEqual(['storage.objects.create', 'storage.objects.get']);
  });

  it('PAYLOAD_BUCKET and REFERENCE_BUCKETS: the bucket named, read access on each sender bucket, both passed to every function', () => {
    const result = deploy(['--project', PROJECT, '--dry-run'], {
      PAYLOAD_BUCKET: 'acme-inbox-claims',
      REFERENCE_BUCKETS: ' sender-a-reports, sender-b.reports ,',
    });
    expect(result.status).toBe(0);
    const cs = commandsOf(result.stdout);
    only(cs, (c) => c.startsWith('gcloud storage buckets create gs://acme-inbox-claims '), 'named bucket');
    const senders = cs
      .filter(
        (c) => c.startsWith('gcloud storage buckets add-iam-policy-binding ') && !c.includes('gs://acme-inbox-claims '),
      )
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''} ${flag(c, 'role') ?? ''}`);
    expect(senders.sort()).toEqual(
      ['sender-a-reports', 'sender-b.reports']
        .flatMap((b) =>
          ['inbox-relay', 'inbox-jobs'].map((who) => `gs://${b} serviceAccount:${sa(who)} roles/storage.objectViewer`),
        )
        .sort(),
    );
    // Never created: the buckets are the senders'.
    expect(cs.filter((c) => c.startsWith('gcloud storage buckets create ')).length).toBe(1);
    const deploys = cs.filter((c) => c.startsWith('gcloud functions deploy '));
    expect(deploys.length).toBeGreaterThanOrEqual(FUNCTIONS.length);
    for (const c of deploys)
      expect(envOf(c)).toMatchObject({
        INBOX_PAYLOAD_BUCKET: 'acme-inbox-claims',
        INBOX_REFERENCE_BUCKETS: 'sender-a-reports,sender-b.reports',
      });
  }, 60_000);

  it.each([
    [
      { REFERENCE_BUCKETS: 'gs://sender-a-reports' },
      /REFERENCE_BUCKETS: 'gs:\/\/sender-a-reports' is not a Cloud Storage bucket name/,
    ],
    [{ REFERENCE_BUCKETS: 'Sender_A' }, /REFERENCE_BUCKETS: 'Sender_A' is not a Cloud Storage bucket name/],
    [{ PAYLOAD_BUCKET: 'goog-inbox' }, /PAYLOAD_BUCKET 'goog-inbox' is not a Cloud Storage bucket name/],
    [{ REFERENCE_BUCKETS: `${PROJECT}-inbox-payloads` }, /REFERENCE_BUCKETS names the inbox's own payload bucket/],
  ])(
    '%j is refused (exit 2) before anything runs',
    (env, message) => {
      const result = deploy(['--project', PROJECT, '--dry-run'], env);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(commandsOf(result.stdout)).toEqual([]);
    },
    60_000,
  );
});
