import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { join } from 'node:path';

/** The API message a file is decoded into (see check.py). */
export type SchemaKind = 'alert-policy' | 'dashboard' | 'log-metric' | 'bucket-lifecycle';

/** One file's verdict: no errors means gcloud's own decoder took every field. */
export interface SchemaResult {
  readonly file: string;
  readonly kind: SchemaKind;
  readonly errors: readonly string[];
}

const CHECKER = join(__dirname, 'check.py');

/**
 * gcloud's bundled Python and SDK root, asked of gcloud itself, so the check
 * runs with the message classes of the gcloud that will deploy the files,
 * wherever it is installed. Throws, saying what to install, if there is none.
 */
export function locateGcloudPython(): { python: string; sdkRoot: string } {
  // stdout and stderr are null when gcloud cannot be spawned at all, whatever the types say.
  const info: SpawnSyncReturns<string | null> = spawnSync(
    'gcloud',
    ['info', '--format=value(basic.python_location,installation.sdk_root)'],
    { encoding: 'utf8', env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' }, timeout: 60_000 },
  );
  const [python, sdkRoot] = (info.stdout ?? '').trim().split('\t');
  if (
    info.error !== undefined ||
    info.status !== 0 ||
    python === undefined ||
    python === '' ||
    sdkRoot === undefined ||
    sdkRoot === ''
  ) {
    const why =
      info.error !== undefined
        ? info.error.message
        : `exit ${String(info.status)}: ${(info.stderr ?? '').trim().slice(0, 500)}`;
    throw new Error(
      `gcloud is needed to check infra/monitoring against the Cloud Monitoring and Logging API schemas (with gcloud's own message classes), and \`gcloud info\` failed (${why}). ` +
        'Install the Google Cloud CLI: https://cloud.google.com/sdk/docs/install',
    );
  }
  return { python, sdkRoot };
}

/**
 * Decodes each file as gcloud does before it calls the API and reports every
 * type error, unknown field and unknown enum value (check.py says how).
 */
export function checkSchemas(
  files: ReadonlyArray<{ readonly kind: SchemaKind; readonly file: string }>,
): SchemaResult[] {
  const { python, sdkRoot } = locateGcloudPython();
  const run: SpawnSyncReturns<string | null> = spawnSync(
    python,
    [CHECKER, sdkRoot, ...files.map((f) => `${f.kind}=${f.file}`)],
    { encoding: 'utf8', timeout: 120_000 },
  );
  // 0: all clean, 1: some file has errors (listed on stdout); anything else is the checker failing.
  if (run.error !== undefined || (run.status !== 0 && run.status !== 1)) {
    throw new Error(
      `tools/gcloud-schema/check.py failed (${run.error?.message ?? `exit ${String(run.status)}`}): ${(run.stderr ?? '').slice(0, 2000)}`,
    );
  }
  const stdout = run.stdout ?? '';
  const results = stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SchemaResult);
  if (results.length !== files.length)
    throw new Error(`check.py answered for ${results.length} of ${files.length} files:\n${stdout}${run.stderr ?? ''}`);
  return results;
}
