import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GRPC_STATUS, type GrpcFaultProxy, startGrpcFaultProxy } from '../../tools/faults/grpc-fault-proxy';
import { startTcpProxy, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { uniqueProjectId } from '../support/firestore';
import { type CliRun, spawnCli } from './run-cli';

/**
 * The CLI's expected failures, each for real where it can be: the built CLI
 * in its own process with a clean environment (nothing inherited: no ADC,
 * a HOME without gcloud's files), and one line with its own exit code:
 * 3 no credentials, 4 wrong project, 5 unreachable, 6 permission denied.
 * Wrong project and permission denied come from a local gRPC stand-in that
 * answers as Firestore does (the emulator lets the server SDK do anything).
 * Offline: where google-auth-library would probe for a metadata server, it
 * is pointed at a local port that resets every connection.
 */
const project = uniqueProjectId('cli-fail');
const home = mkdtempSync(join(tmpdir(), 'inbox-cli-home-'));
const clean = { PATH: process.env.PATH, HOME: home, GOOGLE_CLOUD_PROJECT: project };
let standIn: GrpcFaultProxy;
let resettingMetadata: TcpProxy;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** One line on stderr, starting with "inbox: ", nothing on stdout, no library warning. */
function expectOneLine(r: CliRun, code: number, ...says: string[]): void {
  expect({ code: r.code, lines: r.err.split('\n').length, out: r.out }).toEqual({ code, lines: 1, out: '' });
  expect(r.err).toMatch(/^inbox: /);
  expect(r.err).not.toMatch(/Warning|at .*\.js:\d+/);
  for (const s of says) expect(r.err).toContain(s);
}

beforeAll(async () => {
  standIn = await startGrpcFaultProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
  resettingMetadata = await startTcpProxy('127.0.0.1:9', 'refuse');
});
afterAll(async () => {
  await standIn.close();
  await resettingMetadata.close();
});

describe('the CLI fails clearly', () => {
  test('emulator unreachable (a closed port): exit 5 at once, says to start it or unset FIRESTORE_EMULATOR_HOST', async () => {
    const host = `127.0.0.1:${await closedPort()}`;
    const started = Date.now();
    const r = await spawnCli({ ...clean, FIRESTORE_EMULATOR_HOST: host })('stats');
    expectOneLine(
      r,
      5,
      `no Firestore emulator answers at ${host}`,
      'connection refused',
      'npm run emulators',
      'unset FIRESTORE_EMULATOR_HOST',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test.each([
    ['METADATA_SERVER_DETECTION=none', { METADATA_SERVER_DETECTION: 'none' }],
    ['the metadata server looked up (and resetting the connection)', { GCE_METADATA_HOST: '' }],
  ])('no credentials, %s: exit 3, says how to log in, no library warning', async (_name, extra) => {
    const env = {
      ...clean,
      ...extra,
      ...('GCE_METADATA_HOST' in extra ? { GCE_METADATA_HOST: resettingMetadata.host } : {}),
    };
    const r = await spawnCli(env)('list');
    expectOneLine(r, 3, `no Google credentials for project ${project}`, 'gcloud auth application-default login');
  });

  test('GOOGLE_APPLICATION_CREDENTIALS pointing at nothing: exit 3, names the path', async () => {
    const missing = join(home, 'no-such-key.json');
    const r = await spawnCli({ ...clean, METADATA_SERVER_DETECTION: 'none', GOOGLE_APPLICATION_CREDENTIALS: missing })(
      'stats',
    );
    expectOneLine(r, 3, `GOOGLE_APPLICATION_CREDENTIALS=${missing} gives no credentials`, 'service account key file');
  });

  test('permission denied: exit 6, names the role', async () => {
    standIn.refuseAll({ code: GRPC_STATUS.PERMISSION_DENIED, message: 'Missing or insufficient permissions.' });
    const r = await spawnCli({ ...clean, FIRESTORE_EMULATOR_HOST: standIn.host })('list', '--status', 'PARKED');
    expectOneLine(
      r,
      6,
      `permission denied on project ${project}`,
      'Missing or insufficient permissions.',
      'roles/datastore.user',
    );
  });

  test.each([
    [
      'no database',
      GRPC_STATUS.NOT_FOUND,
      `The database (default) does not exist for project ${project} Please visit https://console.cloud.google.com/datastore/setup?project=${project} to add a Cloud Datastore or Cloud Firestore database.`,
    ],
    [
      'the Firestore API off',
      GRPC_STATUS.PERMISSION_DENIED,
      `Cloud Firestore API has not been used in project ${project} before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/firestore.googleapis.com/overview?project=${project} then retry.`,
    ],
  ])('wrong project (%s): exit 4, says to check GOOGLE_CLOUD_PROJECT', async (_name, code, message) => {
    standIn.refuseAll({ code, message });
    const r = await spawnCli({ ...clean, FIRESTORE_EMULATOR_HOST: standIn.host })('show', 'f'.repeat(40));
    expectOneLine(r, 4, `project ${project}`, 'check GOOGLE_CLOUD_PROJECT');
  });

  test.each([['waiting'], ['timers']])(
    '%s before its index is built: exit 1, says to deploy the indexes and wait for READY',
    async (command) => {
      standIn.refuseAll({
        code: GRPC_STATUS.FAILED_PRECONDITION,
        message: `The query requires an index. You can create it here: https://console.firebase.google.com/v1/r/project/${project}/firestore/indexes?create_composite=x`,
      });
      const r = await spawnCli({ ...clean, FIRESTORE_EMULATOR_HOST: standIn.host })(command);
      expectOneLine(
        r,
        1,
        `Firestore of project ${project} has no index for this query yet`,
        'infra/deploy.sh',
        'READY',
      );
    },
  );

  test('no project: exit 2, one line naming GOOGLE_CLOUD_PROJECT', async () => {
    const r = await spawnCli({ PATH: process.env.PATH, HOME: home, METADATA_SERVER_DETECTION: 'none' })('stats');
    expectOneLine(r, 2, 'GOOGLE_CLOUD_PROJECT');
  });

  test('on the emulator, a command that works prints no library warning either', async () => {
    const r = await spawnCli({
      ...clean,
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST,
      GCE_METADATA_HOST: resettingMetadata.host,
    })('--json', 'stats');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ counts: { OPEN: 0, DONE: 0, PARKED: 0 } });
  });
});
