import { z } from 'zod';
import { CONSOLE_DEFAULTS, type ConsoleConfig, consoleConfig, consoleEnvFields, consoleIssues } from './config-console';
import { bucketNameProblem } from './core/gs-uri';

/**
 * Every setting the functions read, with its default. Parsed once at start-up
 * by {@link loadConfig}; nothing else in the code reads `process.env`.
 */
export const DEFAULTS = {
  /** Push authentication is on unless explicitly disabled (the Pub/Sub emulator sends no token). */
  INBOX_PUSH_AUTH: 'enabled',
  /**
   * Largest decoded `message.data` accepted, in bytes. 10 MiB is the Pub/Sub
   * maximum, so the default never refuses a message Pub/Sub could deliver.
   */
  INBOX_MAX_DATA_BYTES: 10 * 1024 * 1024,
  /**
   * Deadline for the inbox write, in ms. It must stay below the push
   * subscription's ack deadline (10 s minimum): a late 2xx counts as a nack.
   */
  INBOX_WRITE_TIMEOUT_MS: 8_000,
  /** Number of shards of the relay's candidate index (see docs/data-model.md). */
  INBOX_SHARDS: 16,
  /** Cloud Tasks location and queue of the async process steps. */
  INBOX_TASKS_LOCATION: 'europe-west1',
  INBOX_TASKS_QUEUE: 'process-jobs',
  /** Cloud Tasks queue of the timers: one task per timer due within the horizon, POSTed to fireTimer at its due time. */
  INBOX_TIMERS_QUEUE: 'process-timers',
  /**
   * Issuer (`iss`) of the OIDC tokens runJob accepts: Google, which signs
   * Cloud Tasks' tokens (accepted with and without `https://`, as Google
   * writes both). Set it, with INBOX_TASKS_OIDC_CERTS_URL, for another issuer
   * of those tokens, e.g. the local Cloud Tasks emulator, which signs with
   * a key of its own (packages/cloud-tasks-emulator).
   */
  INBOX_TASKS_OIDC_ISSUER: 'https://accounts.google.com',
  /** Where runJob fetches that issuer's public keys: a JSON map of key id to PEM, the shape of Google's v1 certs. */
  INBOX_TASKS_OIDC_CERTS_URL: 'https://www.googleapis.com/oauth2/v1/certs',
  /**
   * The app the deployment runs: its folder, relative to the repository
   * root, whose index.ts declares its models, message types and step
   * handlers (functions/src/app.ts, docs/your-own-process.md). Read when
   * `npm run build` bundles it and when a function starts.
   */
  INBOX_APP: 'examples/work-orders',
  /** Failed runs of a job before it is FAILED (an incident); keep it below the queue's maxAttempts. */
  INBOX_JOB_MAX_ATTEMPTS: 10,
  /**
   * The jobs queue's retryConfig.maxAttempts (infra/deploy.sh sets both). On
   * the attempt Cloud Tasks numbers as the last (X-CloudTasks-TaskRetryCount
   * + 1 = this), runJob records the job FAILED whatever failed: after it
   * Cloud Tasks drops the task, and nothing would run the job again.
   */
  INBOX_JOBS_QUEUE_MAX_ATTEMPTS: 20,
  /**
   * sweepJobs: a PENDING job older than this whose Cloud Task still exists
   * (or its name is still reserved, ~1 h after Cloud Tasks dropped it) is
   * logged at ERROR. Longer than the queue's whole retry schedule (about
   * 50 min with deploy.sh's 20 attempts, 1 s to 300 s backoff), so a job
   * still retrying normally is not reported.
   */
  INBOX_JOB_STUCK_AFTER_MS: 2 * 60 * 60_000,
  /** One relay call stops starting work after this long; below Cloud Scheduler's deadline. */
  INBOX_RELAY_BUDGET_MS: 50_000,
  /**
   * How far past its budget work already started in a relay call may run:
   * each transaction's deadline, and the failure record's, is cut to what is
   * left of budget + grace. 50 s + 5 s + the gauge reads stays well below the
   * scheduler's 90 s attempt deadline.
   */
  INBOX_RELAY_GRACE_MS: 5_000,
  /** Correlation keys one relay call works on at once. */
  INBOX_RELAY_PARALLELISM: 8,
  /** Candidates fetched per round, spread over the shards. */
  INBOX_RELAY_BATCH_SIZE: 200,
  /** Queue of the receiver's fast-path tasks (one per new message). */
  INBOX_RELAY_QUEUE: 'inbox-relay',
  /** Relay backoff: first step and cap. */
  INBOX_BACKOFF_BASE_MS: 5_000,
  INBOX_BACKOFF_CAP_MS: 15 * 60_000,
  /** How long a message may wait for its process to arrive before it is parked (from receipt, or from its last requeue). */
  INBOX_BUFFER_WINDOW_MS: 24 * 60 * 60_000,
  /** Technical failures are logged as ERROR from this attempt on. */
  INBOX_ERROR_AFTER_ATTEMPTS: 5,
  /** Deadline of one relay transaction; the Firestore client alone would retry an outage for minutes. */
  INBOX_RELAY_TX_TIMEOUT_MS: 20_000,
  /** Days DONE documents are kept (expireAt, for a Firestore TTL policy). */
  INBOX_DONE_RETENTION_DAYS: 7,
  /**
   * Days the record of a processed message (`processedMessages/{id}`: id,
   * payload hash, when, which instance; no payload) is kept after its DONE
   * document became DONE, so that Pub/Sub bringing the message back (a
   * subscription rewound by a seek, a snapshot, retained acked messages)
   * finds it a duplicate instead of a new message. 31: the longest a topic
   * or subscription keeps a message, counted from its publication, which is
   * before processing. Set it to the longest message retention of any topic
   * or subscription that pushes here; a value below
   * INBOX_DONE_RETENTION_DAYS protects no longer than the DONE document does.
   */
  INBOX_DEDUP_RETENTION_DAYS: 31,
  /**
   * sweepJobs re-dispatches PENDING jobs older than this: long enough that
   * their creator has dispatched them, short enough that a job whose task was
   * never created (a crash, a transaction that committed after its deadline)
   * does not wait long. Re-dispatching a dispatched job changes nothing.
   */
  INBOX_SWEEP_GRACE_MS: 60_000,
  /**
   * The relay's waiting gauge counts, per message name, the tokens that have
   * waited at least this many days (`waitingOverThreshold`); the alert
   * policy waiting-too-long.json fires while that count is above 0. Longer
   * than a message is normally awaited, shorter than anyone would wait
   * without asking why.
   */
  INBOX_WAITING_ALERT_DAYS: 15,
  /**
   * A valid payload whose canonical JSON is larger than this many bytes is
   * offloaded to INBOX_PAYLOAD_BUCKET before its document is created (a
   * Firestore document holds at most 1 MiB; at most 900 KiB is accepted).
   */
  INBOX_OFFLOAD_BYTES: 512 * 1024,
  /**
   * Share of new traces (a message without trace context, a request without
   * `traceparent`) that are recorded; a sampled parent is always followed.
   */
  INBOX_TRACE_SAMPLE_RATIO: 0.1,
  /** inboxConsole's settings (config-console.ts). */
  ...CONSOLE_DEFAULTS,
} as const;

const DAY_MS = 24 * 60 * 60_000;

/** {@link DEFAULTS.INBOX_DEDUP_RETENTION_DAYS} in ms: what callers that are not given the configuration use. */
export const DEFAULT_RECORD_RETENTION_MS = DEFAULTS.INBOX_DEDUP_RETENTION_DAYS * DAY_MS;

/** Room for the envelope around base64 data: attributes (Pub/Sub allows 100 of up to 1.25 KiB), ids, JSON. */
const ENVELOPE_ALLOWANCE_BYTES = 512 * 1024;

const emailList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0),
  )
  .pipe(z.array(z.email()).min(1, 'name at least one service-account email'));

/** Comma-separated bucket names; each must be a valid Cloud Storage bucket name. */
const bucketList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b.length > 0),
  )
  .pipe(z.array(z.string().refine((b) => bucketNameProblem(b) === null, 'a Cloud Storage bucket name')));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Key documents travel over TLS, except on this machine (a local token issuer): whoever serves them decides which tokens pass. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const isTlsOrLoopback = (value: string): boolean => {
  // zod runs refinements after a failed z.url() too: a value that is no URL must not throw here.
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
};
const certsUrl = z.url().refine(isTlsOrLoopback, 'https, or http on a loopback host (127.0.0.1, localhost, [::1])');

/** INBOX_APP: a folder inside the repository, relative to its root. */
const AppFolder = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/,
    'a folder inside the repository, relative to its root (e.g. examples/work-orders)',
  )
  .refine((v) => !v.split('/').includes('..'), 'a folder inside the repository: no ..')
  .default(DEFAULTS.INBOX_APP);

const EnvSchema = z
  .object({
    GOOGLE_CLOUD_PROJECT: z.string().min(1, 'set it to the Google Cloud project id'),
    INBOX_PUSH_AUTH: z.enum(['enabled', 'disabled']).default(DEFAULTS.INBOX_PUSH_AUTH),
    INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN: z.literal('intended', "the only value is 'intended'").optional(),
    // Set by Cloud Run (and so by Cloud Functions gen2) in every instance; never by this project.
    K_SERVICE: z.string().optional(),
    INBOX_PUSH_AUDIENCE: z.string().min(1).optional(),
    INBOX_PUSH_SERVICE_ACCOUNTS: emailList.optional(),
    INBOX_MAX_DATA_BYTES: positiveInt(DEFAULTS.INBOX_MAX_DATA_BYTES),
    INBOX_WRITE_TIMEOUT_MS: positiveInt(DEFAULTS.INBOX_WRITE_TIMEOUT_MS),
    INBOX_SHARDS: z.coerce.number().int().min(1).max(256).default(DEFAULTS.INBOX_SHARDS),
    INBOX_TASKS_LOCATION: z.string().min(1).default(DEFAULTS.INBOX_TASKS_LOCATION),
    INBOX_TASKS_QUEUE: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/, 'letters, digits and hyphens')
      .default(DEFAULTS.INBOX_TASKS_QUEUE),
    INBOX_RUN_JOB_URL: z.url().optional(),
    INBOX_TIMERS_QUEUE: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/, 'letters, digits and hyphens')
      .default(DEFAULTS.INBOX_TIMERS_QUEUE),
    INBOX_FIRE_TIMER_URL: z.url().optional(),
    INBOX_TASKS_SERVICE_ACCOUNT: z.email().optional(),
    INBOX_RELAY_TASKS_SERVICE_ACCOUNT: z.email().optional(),
    INBOX_TASKS_EMULATOR_HOST: z
      .string()
      .regex(/^[^:]+:\d+$/, 'HOST:PORT')
      .optional(),
    INBOX_TASKS_OIDC_ISSUER: z.string().min(1).default(DEFAULTS.INBOX_TASKS_OIDC_ISSUER),
    INBOX_TASKS_OIDC_CERTS_URL: certsUrl.default(DEFAULTS.INBOX_TASKS_OIDC_CERTS_URL),
    INBOX_APP: AppFolder,
    INBOX_JOB_MAX_ATTEMPTS: positiveInt(DEFAULTS.INBOX_JOB_MAX_ATTEMPTS),
    INBOX_JOBS_QUEUE_MAX_ATTEMPTS: positiveInt(DEFAULTS.INBOX_JOBS_QUEUE_MAX_ATTEMPTS),
    INBOX_JOB_STUCK_AFTER_MS: positiveInt(DEFAULTS.INBOX_JOB_STUCK_AFTER_MS),
    INBOX_BPMN_DIR: z.string().min(1).optional(),
    INBOX_RELAY_BUDGET_MS: positiveInt(DEFAULTS.INBOX_RELAY_BUDGET_MS),
    INBOX_RELAY_GRACE_MS: positiveInt(DEFAULTS.INBOX_RELAY_GRACE_MS),
    INBOX_RELAY_PARALLELISM: positiveInt(DEFAULTS.INBOX_RELAY_PARALLELISM),
    INBOX_RELAY_BATCH_SIZE: positiveInt(DEFAULTS.INBOX_RELAY_BATCH_SIZE),
    INBOX_RELAY_URL: z.url().optional(),
    INBOX_RELAY_QUEUE: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/, 'letters, digits and hyphens')
      .default(DEFAULTS.INBOX_RELAY_QUEUE),
    INBOX_BACKOFF_BASE_MS: positiveInt(DEFAULTS.INBOX_BACKOFF_BASE_MS),
    INBOX_BACKOFF_CAP_MS: positiveInt(DEFAULTS.INBOX_BACKOFF_CAP_MS),
    INBOX_BUFFER_WINDOW_MS: positiveInt(DEFAULTS.INBOX_BUFFER_WINDOW_MS),
    INBOX_ERROR_AFTER_ATTEMPTS: positiveInt(DEFAULTS.INBOX_ERROR_AFTER_ATTEMPTS),
    INBOX_DONE_RETENTION_DAYS: positiveInt(DEFAULTS.INBOX_DONE_RETENTION_DAYS),
    INBOX_DEDUP_RETENTION_DAYS: positiveInt(DEFAULTS.INBOX_DEDUP_RETENTION_DAYS),
    INBOX_RELAY_TX_TIMEOUT_MS: positiveInt(DEFAULTS.INBOX_RELAY_TX_TIMEOUT_MS),
    INBOX_SWEEP_GRACE_MS: positiveInt(DEFAULTS.INBOX_SWEEP_GRACE_MS),
    INBOX_WAITING_ALERT_DAYS: positiveInt(DEFAULTS.INBOX_WAITING_ALERT_DAYS),
    INBOX_PAYLOAD_BUCKET: z
      .string()
      .refine((b) => bucketNameProblem(b) === null, 'a Cloud Storage bucket name')
      .optional(),
    INBOX_OFFLOAD_BYTES: z.coerce
      .number()
      .int()
      .min(1)
      .max(900 * 1024, "at most 921600 (900 KiB): the document keeps the rest below Firestore's 1 MiB")
      .default(DEFAULTS.INBOX_OFFLOAD_BYTES),
    INBOX_REFERENCE_BUCKETS: bucketList.optional(),
    // No default here: cloud-trace on Cloud Run (K_SERVICE set), none elsewhere (loadConfig decides).
    INBOX_TRACE_EXPORTER: z
      .union([z.enum(['cloud-trace', 'none']), z.string().regex(/^file:.+/, "'cloud-trace', 'none' or 'file:<path>'")])
      .optional(),
    INBOX_TRACE_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(DEFAULTS.INBOX_TRACE_SAMPLE_RATIO),
    ...consoleEnvFields(certsUrl.default(DEFAULTS.INBOX_CONSOLE_OIDC_CERTS_URL)),
    // No default: unset, the CLI records the OS account as user@host (see Config.operator).
    INBOX_OPERATOR: z
      .string()
      .trim()
      .min(1, 'name who runs the CLI (an e-mail or user@host), or leave it unset')
      .max(200, 'at most 200 characters')
      .regex(/^[^\p{Cc}]*$/u, 'no control characters (it is stored and logged)')
      .optional(),
  })
  .superRefine((e, ctx) => {
    // Without a token check, anyone who can reach the URL pushes messages into the inbox or runs jobs.
    if (
      e.INBOX_PUSH_AUTH === 'disabled' &&
      e.K_SERVICE !== undefined &&
      e.INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['INBOX_PUSH_AUTH'],
        message: `'disabled' is refused on Cloud Run (K_SERVICE=${e.K_SERVICE} is set): it is only for the local emulators, which send no token. Remove it, or set INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN=intended if every caller is authenticated in front of the service`,
      });
    }
    // Another issuer's tokens are never signed with Google's keys: runJob would refuse every one.
    if (
      e.INBOX_TASKS_OIDC_ISSUER !== DEFAULTS.INBOX_TASKS_OIDC_ISSUER &&
      e.INBOX_TASKS_OIDC_CERTS_URL === DEFAULTS.INBOX_TASKS_OIDC_CERTS_URL
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['INBOX_TASKS_OIDC_CERTS_URL'],
        message: `set it to the keys of INBOX_TASKS_OIDC_ISSUER=${e.INBOX_TASKS_OIDC_ISSUER}; Google's keys sign only Google's tokens`,
      });
    }
    for (const issue of consoleIssues(e)) ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message });
  });

/**
 * Push authentication: off, or on with the audience and the allowed push
 * service accounts. Only the push endpoints need those two settings; they ask
 * for them with requirePushAuth (config-requirements.ts), so the other functions start without.
 */
export type PushAuthConfig =
  | { readonly mode: 'disabled' }
  | { readonly mode: 'enabled'; readonly audience: string | null; readonly allowedEmails: readonly string[] };

/** The parsed configuration. */
export interface Config {
  readonly projectId: string;
  readonly pushAuth: PushAuthConfig;
  /** See {@link DEFAULTS.INBOX_MAX_DATA_BYTES}. */
  readonly maxDataBytes: number;
  /** Largest request body: base64 of maxDataBytes plus the envelope allowance. */
  readonly maxBodyBytes: number;
  readonly writeTimeoutMs: number;
  readonly shards: number;
  readonly tasks: TasksConfig;
  /** See {@link DEFAULTS.INBOX_APP}. */
  readonly app: string;
  readonly jobMaxAttempts: number;
  /** See {@link DEFAULTS.INBOX_JOBS_QUEUE_MAX_ATTEMPTS}. */
  readonly jobsQueueMaxAttempts: number;
  /** See {@link DEFAULTS.INBOX_JOB_STUCK_AFTER_MS}. */
  readonly jobStuckAfterMs: number;
  /** See {@link DEFAULTS.INBOX_SWEEP_GRACE_MS}. */
  readonly sweepGraceMs: number;
  /** Directory of the deployed BPMN models; null: the app's (its `models` folder). */
  readonly bpmnDir: string | null;
  readonly relay: RelayConfig;
  readonly claims: ClaimsConfig;
  readonly trace: TraceConfig;
  readonly console: ConsoleConfig;
  /**
   * INBOX_OPERATOR: who the `inbox` CLI records as having made a repair (`by`
   * on the repair record). null (unset): the OS account, `user@host`. Set it
   * where that account says nothing (a shared bastion, a container).
   */
  readonly operator: string | null;
}

/** Tracing (functions/src/trace/): where spans go and how many new traces are recorded. */
export interface TraceConfig {
  /** INBOX_TRACE_EXPORTER: Cloud Trace, JSON lines in a file (local runs, benches, tests), or nothing. */
  readonly exporter:
    { readonly kind: 'cloud-trace' } | { readonly kind: 'none' } | { readonly kind: 'file'; readonly path: string };
  /** See {@link DEFAULTS.INBOX_TRACE_SAMPLE_RATIO}. */
  readonly sampleRatio: number;
}

/** Claim checks (inbox/claim-check.ts). */
export interface ClaimsConfig {
  /** The inbox's own bucket of offloaded payloads (INBOX_PAYLOAD_BUCKET, default `<project>-inbox-payloads`). */
  readonly payloadBucket: string;
  /** See {@link DEFAULTS.INBOX_OFFLOAD_BYTES}. */
  readonly offloadBytes: number;
  /** Buckets a sender's reference may name (INBOX_REFERENCE_BUCKETS, comma-separated, default none): any other is parked INVALID_PAYLOAD, never fetched. */
  readonly referenceBuckets: readonly string[];
}

/** The relay's settings (see DEFAULTS for each). */
export interface RelayConfig {
  readonly budgetMs: number;
  /** See {@link DEFAULTS.INBOX_RELAY_GRACE_MS}. */
  readonly graceMs: number;
  readonly parallelism: number;
  readonly batchSize: number;
  /** URL of relayInbox for the receiver's fast path; null: no fast path, the schedule alone relays. */
  readonly url: string | null;
  readonly queue: string;
  /**
   * Service account the fast-path tasks' OIDC tokens are signed as
   * (INBOX_RELAY_TASKS_SERVICE_ACCOUNT, default INBOX_TASKS_SERVICE_ACCOUNT).
   * A separate one, allowed to invoke relayInbox only, means the receiver
   * (which creates these tasks) can never mint a token that runJob accepts.
   */
  readonly tasksServiceAccount: string | null;
  readonly policy: {
    readonly backoffBaseMs: number;
    readonly backoffCapMs: number;
    readonly bufferWindowMs: number;
    readonly errorAfterAttempts: number;
  };
  readonly retentionMs: number;
  /** See {@link DEFAULTS.INBOX_DEDUP_RETENTION_DAYS}. */
  readonly recordRetentionMs: number;
  readonly transactionTimeoutMs: number;
  /** See {@link DEFAULTS.INBOX_WAITING_ALERT_DAYS}. */
  readonly waitingAlertDays: number;
}

/** Where async process steps go. */
export interface TasksConfig {
  readonly location: string;
  readonly queue: string;
  /** URL of the runJob function; required by functions that create jobs (see requireRunJobUrl in config-requirements.ts). */
  readonly runJobUrl: string | null;
  /** Queue of the timers' tasks (INBOX_TIMERS_QUEUE), signed as {@link serviceAccount} like the job tasks. */
  readonly timersQueue: string;
  /** URL of the fireTimer function; required by functions that set timers (see requireFireTimerUrl in config-requirements.ts). */
  readonly fireTimerUrl: string | null;
  /** Service account Cloud Tasks signs the job tasks' OIDC tokens as (runJob accepts only it); null: no token (the local emulator). */
  readonly serviceAccount: string | null;
  /** HOST:PORT of the local Cloud Tasks emulator; null: the real service. */
  readonly emulatorHost: string | null;
  /** Who signs the job tasks' OIDC tokens and where its keys are (see {@link DEFAULTS.INBOX_TASKS_OIDC_ISSUER}). */
  readonly oidc: { readonly issuer: string; readonly certsUrl: string };
}

/** A configuration error; its message names every offending variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment once. Throws {@link ConfigError} naming each bad variable. */
/**
 * The settings that say which app runs (INBOX_APP, INBOX_BPMN_DIR), read
 * without the rest: what `npm run build`, `inbox app` and deploy.sh need
 * before any project exists. The same checks as {@link loadConfig}'s.
 */
export function loadAppSettings(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'app' | 'bpmnDir'> {
  const parsed = z.object({ INBOX_APP: AppFolder, INBOX_BPMN_DIR: z.string().min(1).optional() }).safeParse(env);
  if (!parsed.success)
    throw new ConfigError(
      `invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`,
    );
  return { app: parsed.data.INBOX_APP, bpmnDir: parsed.data.INBOX_BPMN_DIR ?? null };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const pushAuth: PushAuthConfig =
    e.INBOX_PUSH_AUTH === 'disabled'
      ? { mode: 'disabled' }
      : {
          mode: 'enabled',
          audience: e.INBOX_PUSH_AUDIENCE ?? null,
          allowedEmails: e.INBOX_PUSH_SERVICE_ACCOUNTS ?? [],
        };
  return {
    projectId: e.GOOGLE_CLOUD_PROJECT,
    pushAuth,
    maxDataBytes: e.INBOX_MAX_DATA_BYTES,
    maxBodyBytes: Math.ceil(e.INBOX_MAX_DATA_BYTES / 3) * 4 + ENVELOPE_ALLOWANCE_BYTES,
    writeTimeoutMs: e.INBOX_WRITE_TIMEOUT_MS,
    shards: e.INBOX_SHARDS,
    tasks: {
      location: e.INBOX_TASKS_LOCATION,
      queue: e.INBOX_TASKS_QUEUE,
      runJobUrl: e.INBOX_RUN_JOB_URL ?? null,
      timersQueue: e.INBOX_TIMERS_QUEUE,
      fireTimerUrl: e.INBOX_FIRE_TIMER_URL ?? null,
      serviceAccount: e.INBOX_TASKS_SERVICE_ACCOUNT ?? null,
      emulatorHost: e.INBOX_TASKS_EMULATOR_HOST ?? null,
      oidc: { issuer: e.INBOX_TASKS_OIDC_ISSUER, certsUrl: e.INBOX_TASKS_OIDC_CERTS_URL },
    },
    app: e.INBOX_APP,
    jobMaxAttempts: e.INBOX_JOB_MAX_ATTEMPTS,
    jobsQueueMaxAttempts: e.INBOX_JOBS_QUEUE_MAX_ATTEMPTS,
    jobStuckAfterMs: e.INBOX_JOB_STUCK_AFTER_MS,
    sweepGraceMs: e.INBOX_SWEEP_GRACE_MS,
    bpmnDir: e.INBOX_BPMN_DIR ?? null,
    relay: {
      budgetMs: e.INBOX_RELAY_BUDGET_MS,
      graceMs: e.INBOX_RELAY_GRACE_MS,
      parallelism: e.INBOX_RELAY_PARALLELISM,
      batchSize: e.INBOX_RELAY_BATCH_SIZE,
      url: e.INBOX_RELAY_URL ?? null,
      queue: e.INBOX_RELAY_QUEUE,
      tasksServiceAccount: e.INBOX_RELAY_TASKS_SERVICE_ACCOUNT ?? e.INBOX_TASKS_SERVICE_ACCOUNT ?? null,
      policy: {
        backoffBaseMs: e.INBOX_BACKOFF_BASE_MS,
        backoffCapMs: e.INBOX_BACKOFF_CAP_MS,
        bufferWindowMs: e.INBOX_BUFFER_WINDOW_MS,
        errorAfterAttempts: e.INBOX_ERROR_AFTER_ATTEMPTS,
      },
      retentionMs: e.INBOX_DONE_RETENTION_DAYS * DAY_MS,
      recordRetentionMs: e.INBOX_DEDUP_RETENTION_DAYS * DAY_MS,
      transactionTimeoutMs: e.INBOX_RELAY_TX_TIMEOUT_MS,
      waitingAlertDays: e.INBOX_WAITING_ALERT_DAYS,
    },
    claims: {
      payloadBucket: e.INBOX_PAYLOAD_BUCKET ?? defaultPayloadBucket(e.GOOGLE_CLOUD_PROJECT),
      offloadBytes: e.INBOX_OFFLOAD_BYTES,
      referenceBuckets: e.INBOX_REFERENCE_BUCKETS ?? [],
    },
    console: consoleConfig(e),
    trace: {
      exporter: traceExporter(e.INBOX_TRACE_EXPORTER ?? (e.K_SERVICE === undefined ? 'none' : 'cloud-trace')),
      sampleRatio: e.INBOX_TRACE_SAMPLE_RATIO,
    },
    operator: e.INBOX_OPERATOR ?? null,
  };
}

function traceExporter(value: string): TraceConfig['exporter'] {
  if (value === 'cloud-trace' || value === 'none') return { kind: value };
  return { kind: 'file', path: value.slice('file:'.length) };
}

/** `<project>-inbox-payloads`, lowercased (a project id may not be a bucket name as is: `google` prefixes, length), cut to 63 characters. */
export function defaultPayloadBucket(projectId: string): string {
  const base = projectId
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+/, '');
  return `${base.slice(0, 63 - '-inbox-payloads'.length)}-inbox-payloads`;
}
