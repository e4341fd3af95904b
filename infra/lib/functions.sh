# shellcheck shell=bash
# The eight HTTP functions and what calls them: push subscriptions and Cloud
# Scheduler jobs (Cloud Tasks queues are in platform.sh). Sourced by infra/deploy.sh.

FUNCTIONS=(receivePubSubPush receiveDeadLetter startProcess runJob fireTimer sweepJobs relayInbox inboxConsole)

# Runtime identity of each function (see docs/deploy.md, "What it creates").
declare -A FN_SA=(
  [receivePubSubPush]=inbox-receiver
  [receiveDeadLetter]=inbox-receiver
  [startProcess]=inbox-jobs
  [runJob]=inbox-jobs
  [fireTimer]=inbox-jobs
  [sweepJobs]=inbox-jobs
  [relayInbox]=inbox-relay
  [inboxConsole]=inbox-console
)
# Cloud Run settings of each function, each with its reason. Measured with
# `npm run test:load -- --concurrency 80` (one receiver process, concurrency
# 80): see docs/performance.md for the figures these rest on.
#
# Memory. The push endpoints take messages of up to 10 MiB; base64 in JSON
# means ~3 copies of a message in memory while it is parsed and decoded
# (~40 MiB for the largest). 1 GiB leaves room for ~20 such messages in
# flight next to the ~230 MB the receiver settles at under load; small
# messages need far less. Memory costs ~10 % of CPU per second on Cloud Run,
# so the headroom is cheap. runJob runs the app's steps, which may read a
# claim check's object of up to 10 MiB (the bytes, the text, what a step
# parses of it: ~60 MB for the largest), so 512Mi leaves room for a few at
# once among 20 small jobs.
# The others handle small JSON bodies; the console reads pages of up to 500
# documents and an instance with its 100 audit entries: 512Mi.
declare -A FN_MEMORY=(
  [receivePubSubPush]=1Gi
  [receiveDeadLetter]=1Gi
  [startProcess]=256Mi
  [runJob]=512Mi
  [fireTimer]=256Mi
  [sweepJobs]=256Mi
  [relayInbox]=512Mi
  [inboxConsole]=512Mi
)
# CPU. A concurrency above 1 needs a whole vCPU (a Cloud Run rule). sweepJobs
# runs once a minute, alone, and does a few queries (and fires the odd lost
# timer): a sixth of a vCPU.
declare -A FN_CPU=(
  [receivePubSubPush]=1
  [receiveDeadLetter]=1
  [startProcess]=1
  [runJob]=1
  [fireTimer]=1
  [sweepJobs]=0.167
  [relayInbox]=1
  [inboxConsole]=1
)
# Concurrency (requests one instance serves at once). The receiver is I/O
# bound (one Firestore write per message, ~7 ms of CPU): one instance takes a
# burst of pushes instead of one cold start per push; 80 is Cloud Run's
# default and what the load test measures. The dead-letter endpoint sees
# floods only when the receiver is misconfigured; 20 drains one without the
# memory of 80 large messages. startProcess and runJob wait on Firestore,
# Pub/Sub and Cloud Tasks. A scheduled relay call is one long request (up to
# ~65 s) that works 8 keys in parallel itself; 10 lets the short fast-path
# calls share its instance instead of starting new ones while it runs.
# fireTimer is one Firestore transaction per request, like a correlation:
# 20, as runJob. sweepJobs is one request a minute. The console serves a
# few operators, each page a handful of reads: 20.
declare -A FN_CONCURRENCY=(
  [receivePubSubPush]=80
  [receiveDeadLetter]=20
  [startProcess]=40
  [runJob]=20
  [fireTimer]=20
  [sweepJobs]=1
  [relayInbox]=10
  [inboxConsole]=20
)
# Maximum instances: the brakes on what a burst can do to Firestore (new
# traffic should start at ~500 writes/s and grow 50 % every 5 minutes) and
# to the bill. 20 receivers at ~140 messages/s per vCPU take ~2,800
# messages/s, one write each; more pushes wait (Pub/Sub retries with
# backoff, nothing is acked early). 10 relays x 10 requests bound the
# correlations in flight (6 writes each); the fast-path queue's dispatch rate
# (platform.sh) bounds their rate, and the timers queue's that of firings
# (10 fireTimer instances x 20). One sweep at a time is enough: it is
# idempotent, and two would only repeat each other. Two consoles are plenty
# for a few operators. Raise these as traffic
# grows (docs/runbook.md, "Deploying and changing the setup").
declare -A FN_MAX_INSTANCES=(
  [receivePubSubPush]=20
  [receiveDeadLetter]=5
  [startProcess]=10
  [runJob]=10
  [fireTimer]=10
  [sweepJobs]=1
  [relayInbox]=10
  [inboxConsole]=2
)
# Minimum instances: 0 everywhere. Nothing here needs an instance waiting: a
# push or task that meets a cold start (~1 s, `npm run bench:cold-start`) is
# only slower, and one that fails is redelivered. A warm receiver
# (--min-instances=1) costs about one idle vCPU-month of instance time.
declare -A FN_MIN_INSTANCES=(
  [receivePubSubPush]=0
  [receiveDeadLetter]=0
  [startProcess]=0
  [runJob]=0
  [fireTimer]=0
  [sweepJobs]=0
  [relayInbox]=0
  [inboxConsole]=0
)
# relayInbox works for INBOX_RELAY_BUDGET_MS (50 s), then finishes the
# transactions in flight (cut at the budget + INBOX_RELAY_GRACE_MS, 5 s) and
# reads the gauges (at most 10 s). fireTimer runs one transaction and
# creates the tasks of what it set: 60 s, as startProcess.
declare -A FN_TIMEOUT=(
  [receivePubSubPush]=60s
  [receiveDeadLetter]=60s
  [startProcess]=60s
  [runJob]=120s
  [fireTimer]=60s
  [sweepJobs]=60s
  [relayInbox]=120s
  [inboxConsole]=60s
)
declare -A URL=()

# Before a function's first deploy its URL (and its peers') does not exist;
# it starts with these, which pass the configuration check and match no real
# caller, and is redeployed with the real URLs right after.
PENDING_URL="https://pending.invalid"

# --set-env-vars for one function. The configuration (functions/src/config.ts)
# is parsed for every function, so each one gets the complete set; with push
# authentication on, INBOX_PUSH_AUDIENCE and INBOX_PUSH_SERVICE_ACCOUNTS are
# required everywhere (only the push endpoints use them: the audience is the
# function's own URL, which is what the subscription puts in its token).
function_env() {
  local own_url=$1 run_job_url=$2 relay_url=$3 fire_timer_url=$4
  local -a env=(
    "GOOGLE_CLOUD_PROJECT=$PROJECT"
    "INBOX_PUSH_AUDIENCE=$own_url"
    "INBOX_PUSH_SERVICE_ACCOUNTS=${SA[inbox-push]}"
    "INBOX_TASKS_LOCATION=$REGION"
    "INBOX_TASKS_QUEUE=$JOBS_QUEUE"
    "INBOX_TIMERS_QUEUE=$TIMERS_QUEUE"
    "INBOX_RELAY_QUEUE=$RELAY_QUEUE"
    "INBOX_TASKS_SERVICE_ACCOUNT=${SA[inbox-tasks]}"
    # Fast-path tasks carry a token of their own account, which may invoke relayInbox only.
    "INBOX_RELAY_TASKS_SERVICE_ACCOUNT=${SA[inbox-relay-tasks]}"
    "INBOX_RUN_JOB_URL=$run_job_url"
    "INBOX_FIRE_TIMER_URL=$fire_timer_url"
    "INBOX_RELAY_URL=$relay_url"
    # The app every function runs (and Cloud Build bundles: --set-build-env-vars).
    "INBOX_APP=$APP_FOLDER"
    "INBOX_JOB_MAX_ATTEMPTS=$JOB_MAX_ATTEMPTS"
    # runJob records a job FAILED on the queue's last attempt, so it must know the queue's maxAttempts.
    "INBOX_JOBS_QUEUE_MAX_ATTEMPTS=$JOBS_QUEUE_MAX_ATTEMPTS"
    "INBOX_WAITING_ALERT_DAYS=$WAITING_ALERT_DAYS"
    # The claim check (infra/lib/storage.sh): the receiver offloads into the
    # payload bucket, the sweep deletes from it; references may name only these buckets.
    "INBOX_PAYLOAD_BUCKET=$PAYLOAD_BUCKET"
    "INBOX_REFERENCE_BUCKETS=$(reference_buckets_value)"
  )
  # INBOX_REFERENCE_BUCKETS is a comma list, so the pairs are joined with "|"
  # instead, which gcloud reads from the "^|^" prefix (gcloud topic escaping).
  local IFS='|'
  printf '^|^%s' "${env[*]}"
}

# gcloud's own OAuth client id: the audience of the ID token of a user signed
# in to gcloud, the token `inbox console` sends (`gcloud auth print-identity-token`) (DEFAULTS in
# functions/src/config-console.ts says more).
GCLOUD_CLIENT_ID=32555940559.apps.googleusercontent.com

# The environment of one function: function_env's set, and for inboxConsole
# who may look and who may repair (--console-viewers / --console-repairers)
# and the audiences its tokens may carry: gcloud's client id (a user through
# the proxy) and its own URL (a token minted for it, e.g. a service account's).
env_of() {
  local fn=$1 own_url=$2
  shift 2
  printf '%s' "$(function_env "$own_url" "$@")"
  [[ $fn == inboxConsole ]] || return 0
  printf '|%s' "INBOX_CONSOLE_AUDIENCES=$GCLOUD_CLIENT_ID,$own_url" "INBOX_CONSOLE_VIEWERS=$CONSOLE_VIEWERS" "INBOX_CONSOLE_REPAIRERS=$CONSOLE_REPAIRERS"
}

# The IAM member of a console user: a service account, or a person's account.
console_member() {
  if [[ $1 == *.gserviceaccount.com ]]; then printf 'serviceAccount:%s' "$1"; else printf 'user:%s' "$1"; fi
}

# run.invoker for every listed console user: Cloud Run lets only them reach
# the console; the console itself then tells a viewer from a repairer.
console_invokers() {
  local email
  local -a emails=()
  IFS=',' read -r -a emails <<<"$CONSOLE_VIEWERS,$CONSOLE_REPAIRERS"
  for email in "${emails[@]}"; do
    [[ -n $email ]] || continue
    gc functions add-invoker-policy-binding inboxConsole --region="$REGION" --member="$(console_member "$email")" --format=none
  done
  if [[ -z $CONSOLE_VIEWERS$CONSOLE_REPAIRERS ]]; then
    note "inboxConsole has no users yet: grant them with --console-viewers=EMAILS and --console-repairers=EMAILS"
  fi
}

# `functions deploy` creates or updates, so it is idempotent by itself.
# --set-env-vars replaces the whole set: a variable removed here is removed there.
# --serve-all-traffic-latest-revision: after a rollback by traffic split
# (docs/runbook.md), the next deploy serves the new code again instead of
# leaving traffic pinned to the old revision.
# The upload is the repository minus infra/gcloudignore (a deny-list: see
# that file), with the app's folder let back in (UPLOAD_IGNORE_FILE,
# infra/lib/app.sh); Cloud Build runs `npm ci` and `npm run gcp-build` on it
# as inbox-build, with INBOX_APP in its environment (--set-build-env-vars,
# which replaces the whole set), so the build bundles the app the functions
# load. test/infra/deploy-rehearsal.test.ts runs these exact commands with
# the real gcloud against a local stand-in and builds and starts the upload.
deploy_function() {
  local fn=$1 env_vars=$2
  gc functions deploy "$fn" --gen2 --runtime=nodejs22 --region="$REGION" \
    --source=. --ignore-file="$UPLOAD_IGNORE_FILE" --entry-point="$fn" \
    --trigger-http --no-allow-unauthenticated \
    --service-account="${SA[${FN_SA[$fn]}]}" \
    --build-service-account="projects/$PROJECT/serviceAccounts/${SA[inbox-build]}" \
    --memory="${FN_MEMORY[$fn]}" --cpu="${FN_CPU[$fn]}" --timeout="${FN_TIMEOUT[$fn]}" \
    --concurrency="${FN_CONCURRENCY[$fn]}" \
    --max-instances="${FN_MAX_INSTANCES[$fn]}" --min-instances="${FN_MIN_INSTANCES[$fn]}" \
    --serve-all-traffic-latest-revision \
    --set-env-vars="$env_vars" \
    --set-build-env-vars="INBOX_APP=$APP_FOLDER"
}

invoker() {
  gc functions add-invoker-policy-binding "$1" --region="$REGION" --member="serviceAccount:${SA[$2]}" --format=none
}

# Removes an invoker binding an earlier version of this script granted, if
# it is there (a remove of a missing binding fails). A dry run prints it.
revoke_invoker_if_present() {
  local fn=$1 member="serviceAccount:${SA[$2]}" policy="$WORK_DIR/invoker-policy.json" found
  if [[ $DRY_RUN != true ]]; then
    gcloud run services get-iam-policy "${fn,,}" --region="$REGION" --format=json --project="$PROJECT" >"$policy"
    # An assignment, so a policy json-tool cannot read stops the run (set -e).
    found=$(json_tool has-binding "$policy" roles/run.invoker "$member")
    [[ $found == yes ]] || return 0
  fi
  gc functions remove-invoker-policy-binding "$fn" --region="$REGION" --member="$member" --format=none
}

deploy_functions() {
  section "Cloud Functions (gen2, HTTP, no unauthenticated access)"
  local fn
  local -a fresh=()
  for fn in "${FUNCTIONS[@]}"; do
    gc_exists functions describe "$fn" --region="$REGION" || fresh+=("$fn")
  done
  if ((${#fresh[@]} > 0)); then
    note "first deploy of ${fresh[*]}: URLs exist only after a deploy, so these start with"
    note "$PENDING_URL placeholders and are redeployed with the real URLs below."
    for fn in "${fresh[@]}"; do
      deploy_function "$fn" "$(env_of "$fn" "$PENDING_URL/$fn" "$PENDING_URL/runJob" "$PENDING_URL/relayInbox" "$PENDING_URL/fireTimer")"
    done
  fi

  for fn in "${FUNCTIONS[@]}"; do
    URL[$fn]=$(gc_lookup "https://URL_OF_$fn" functions describe "$fn" --region="$REGION" --format='value(serviceConfig.uri)')
    [[ -n ${URL[$fn]} ]] || die "could not read the URL of $fn"
  done
  for fn in "${FUNCTIONS[@]}"; do
    deploy_function "$fn" "$(env_of "$fn" "${URL[$fn]}" "${URL[runJob]}" "${URL[relayInbox]}" "${URL[fireTimer]}")"
  done

  # run.invoker on the Cloud Run service behind each gen2 function.
  invoker receivePubSubPush inbox-push
  invoker receiveDeadLetter inbox-push
  invoker runJob inbox-tasks
  # Timer tasks are signed as the job tasks are (INBOX_TASKS_SERVICE_ACCOUNT).
  invoker fireTimer inbox-tasks
  invoker relayInbox inbox-relay-tasks
  invoker relayInbox inbox-scheduler
  # Before fast-path tasks had their own account, inbox-tasks signed them too.
  revoke_invoker_if_present relayInbox inbox-tasks
  invoker sweepJobs inbox-scheduler
  console_invokers
  if [[ -n $START_PROCESS_INVOKER ]]; then
    gc functions add-invoker-policy-binding startProcess --region="$REGION" --member="$START_PROCESS_INVOKER" --format=none
  else
    note "startProcess has no invoker yet: grant your caller with --start-process-invoker=MEMBER"
  fi
}

# create or update with the same flags; both push with an OIDC token of
# inbox-push whose audience is the endpoint (the function checks both), and
# carry the label inbox-app=NAME (a create sets it, an update adds it).
apply_push_subscription() {
  local name=$1 topic=$2 url=$3
  shift 3
  local -a flags=(
    --push-endpoint="$url"
    --push-auth-service-account="${SA[inbox-push]}"
    --push-auth-token-audience="$url"
    --ack-deadline=60
    --min-retry-delay=10s --max-retry-delay=600s
    --expiration-period=never
    "$@"
  )
  if gc_exists pubsub subscriptions describe "$name"; then
    gc pubsub subscriptions update "$name" "${flags[@]}" --update-labels="inbox-app=$APP_NAME"
  else
    gc pubsub subscriptions create "$name" --topic="$topic" "${flags[@]}" --labels="inbox-app=$APP_NAME"
  fi
}

# A push subscription to receivePubSubPush: kept 7 days, dead-lettered to
# DEAD_LETTER_TOPIC after MAX_DELIVERY_ATTEMPTS, so receiveDeadLetter keeps it.
receiver_subscription() {
  local name=$1 topic=$2
  apply_push_subscription "$name" "$topic" "${URL[receivePubSubPush]}" \
    --message-retention-duration=7d \
    --dead-letter-topic="$DEAD_LETTER_TOPIC" --max-delivery-attempts="$MAX_DELIVERY_ATTEMPTS"
  # Forwarding to the dead-letter topic: the service agent acks the source message.
  gc pubsub subscriptions add-iam-policy-binding "$name" \
    --member="serviceAccount:$PUBSUB_AGENT" --role=roles/pubsub.subscriber --format=none
}

create_subscriptions() {
  section "Push subscriptions (the app's)"
  # The dead-letter topic's subscription first: a message dead-lettered to a
  # topic without subscriptions would be lost. 31 days is Pub/Sub's maximum retention.
  apply_push_subscription "$DEAD_LETTER_SUBSCRIPTION" "$DEAD_LETTER_TOPIC" "${URL[receiveDeadLetter]}" \
    --message-retention-duration=31d
  # One per topic the app's messages arrive on; the receiver takes every
  # message type of the app from any of them (the type is in an attribute).
  local i
  for i in "${!INBOUND_TOPICS[@]}"; do
    receiver_subscription "${INBOUND_SUBSCRIPTIONS[$i]}" "${INBOUND_TOPICS[$i]}"
  done
}

apply_scheduler_job() {
  local name=$1 url=$2 deadline=$3 description=$4
  local -a flags=(
    --location="$REGION"
    --schedule='* * * * *' --time-zone=Etc/UTC
    --uri="$url" --http-method=post
    --oidc-service-account-email="${SA[inbox-scheduler]}"
    --oidc-token-audience="$url"
    --attempt-deadline="$deadline"
    --description="$description"
  )
  if gc_exists scheduler jobs describe "$name" --location="$REGION"; then
    gc scheduler jobs update http "$name" "${flags[@]}"
  else
    gc scheduler jobs create http "$name" "${flags[@]}"
  fi
}

create_scheduler_jobs() {
  section "Cloud Scheduler (every minute)"
  # The relay's deadline covers its 50 s budget, the 5 s grace of the
  # transactions in flight and the gauge reads (at most 10 s): 65 s at worst.
  # A missed minute is harmless, the next call picks up what is due.
  apply_scheduler_job "$RELAY_JOB" "${URL[relayInbox]}" 90s "Relays stored inbox messages into their processes"
  apply_scheduler_job "$SWEEP_JOB" "${URL[sweepJobs]}" 60s "Re-dispatches jobs whose Cloud Task was never created; creates the tasks of far timers once near, fires lost ones"
}
