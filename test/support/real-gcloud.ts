/**
 * The real Google Cloud CLI, aimed at a local stand-in instead of Google:
 * a throwaway configuration directory, a fake access token in a file,
 * `api_endpoint_overrides` for the APIs the stand-in answers, and the
 * stand-in as gcloud's proxy (127.0.0.1 itself is reached directly), so a
 * call for a host the overrides do not cover reaches the stand-in too: as a
 * plain-HTTP request it can route, or as an HTTPS CONNECT it refuses.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RealGcloud {
  /** Environment for a gcloud process (merge it over process.env). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Runs a shell command line (e.g. one printed by `infra/deploy.sh --dry-run`)
   * with that environment. Asynchronous on purpose: a stand-in served by this
   * same process could not answer while a synchronous child blocks it.
   */
  run(commandLine: string, cwd: string): Promise<GcloudRun>;
}

export interface GcloudRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Fails with what to install when gcloud is not on PATH. */
export function requireGcloud(): void {
  const probe = spawnSync('gcloud', ['version'], {
    encoding: 'utf8',
    env: { ...process.env, CLOUDSDK_CONFIG: mkdtempSync(join(tmpdir(), 'gcloud-probe-')) },
  });
  if (probe.status !== 0) {
    throw new Error(
      'the Google Cloud CLI (gcloud) is needed for this test: install google-cloud-cli (see the README prerequisites)',
    );
  }
}

/**
 * @param baseUrl the stand-in, `http://127.0.0.1:PORT/`
 * @param apis API names (as gcloud's `api_endpoint_overrides/<name>` spells them) to send to `baseUrl`.
 */
export function realGcloud(baseUrl: string, accessToken: string, apis: readonly string[]): RealGcloud {
  const dir = mkdtempSync(join(tmpdir(), 'gcloud-config-'));
  const tokenFile = join(dir, 'access-token');
  writeFileSync(tokenFile, accessToken, { mode: 0o600 });
  const env: Record<string, string> = {
    CLOUDSDK_CONFIG: dir,
    CLOUDSDK_AUTH_ACCESS_TOKEN_FILE: tokenFile,
    CLOUDSDK_CORE_DISABLE_PROMPTS: '1',
    CLOUDSDK_CORE_DISABLE_USAGE_REPORTING: 'true',
    CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK: 'true',
    HTTPS_PROXY: baseUrl,
    HTTP_PROXY: baseUrl,
    NO_PROXY: '127.0.0.1,localhost',
  };
  for (const api of apis) env[`CLOUDSDK_API_ENDPOINT_OVERRIDES_${api.toUpperCase()}`] = baseUrl;
  return {
    env,
    run: (commandLine, cwd) =>
      new Promise((resolve) => {
        execFile(
          'bash',
          ['-c', commandLine],
          { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
          (err, stdout, stderr) => {
            const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
            resolve({ status: code, stdout, stderr });
          },
        );
      }),
  };
}
