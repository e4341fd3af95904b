# shellcheck shell=bash
# The six HTTP functions and what calls them: push subscriptions and Cloud
# Scheduler jobs (Cloud Tasks queues are in platform.sh). Sourced by infra/deploy.sh.

FUNCTIONS=(receivePubSubPush receiveDeadLetter startProcess runJob sweepJobs relayInbox)

# Runtime identity of each function (see the README's function table).
declare -A FN_SA=(
  [receivePubSubPush]=inbox-receiver
  [receiveDeadLetter]=inbox-receiver
  [startProcess]=inbox-jobs
  [runJob]=inbox-jobs
  [sweepJobs]=inbox-jobs
  [relayInbox]=inbox-relay
)
# The push endpoints take up to 10 MiB messages (base64 in JSON: ~3 copies in memory).
declare -A FN_MEMORY=(
  [receivePubSubPush]=512Mi
  [receiveDeadLetter]=512Mi
  [startProcess]=256Mi
  [runJob]=256Mi
  [sweepJobs]=256Mi
  [relayInbox]=512Mi
)
# relayInbox works for INBOX_RELAY_BUDGET_MS (50 s), then finishes the
# transactions in flight (cut at the budget + INBOX_RELAY_GRACE_MS, 5 s) and
# reads the gauges (at most 10 s).
declare -A FN_TIMEOUT=(
  [receivePubSubPush]=60s
  [receiveDeadLetter]=60s
  [startProcess]=60s
  [runJob]=120s
  [sweepJobs]=60s
  [relayInbox]=120s
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
  local own_url=$1 run_job_url=$2 relay_url=$3
  local -a env=(
    "GOOGLE_CLOUD_PROJECT=$PROJECT"
    "INBOX_PUSH_AUDIENCE=$own_url"
    "INBOX_PUSH_SERVICE_ACCOUNTS=${SA[inbox-push]}"
    "INBOX_TASKS_LOCATION=$REGION"
    "INBOX_TASKS_QUEUE=$JOBS_QUEUE"
    "INBOX_RELAY_QUEUE=$RELAY_QUEUE"
    "INBOX_TASKS_SERVICE_ACCOUNT=${SA[inbox-tasks]}"
    "INBOX_RUN_JOB_URL=$run_job_url"
    "INBOX_RELAY_URL=$relay_url"
    "INBOX_PROVIDER_TOPIC=$PROVIDER_TOPIC"
    "INBOX_JOB_MAX_ATTEMPTS=$JOB_MAX_ATTEMPTS"
    # runJob records a job FAILED on the queue's last attempt, so it must know the queue's maxAttempts.
    "INBOX_JOBS_QUEUE_MAX_ATTEMPTS=$JOBS_QUEUE_MAX_ATTEMPTS"
  )
  local IFS=,
  printf '%s' "${env[*]}"
}

# `functions deploy` creates or updates, so it is idempotent by itself.
# --set-env-vars replaces the whole set: a variable removed here is removed there.
deploy_function() {
  local fn=$1 env_vars=$2
  gc functions deploy "$fn" --gen2 --runtime=nodejs22 --region="$REGION" \
    --source=. --ignore-file=infra/gcloudignore --entry-point="$fn" \
    --trigger-http --no-allow-unauthenticated \
    --service-account="${SA[${FN_SA[$fn]}]}" \
    --memory="${FN_MEMORY[$fn]}" --timeout="${FN_TIMEOUT[$fn]}" \
    --set-env-vars="$env_vars"
}

invoker() {
  gc functions add-invoker-policy-binding "$1" --region="$REGION" --member="serviceAccount:${SA[$2]}" --format=none
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
      deploy_function "$fn" "$(function_env "$PENDING_URL/$fn" "$PENDING_URL/runJob" "$PENDING_URL/relayInbox")"
    done
  fi

  for fn in "${FUNCTIONS[@]}"; do
    URL[$fn]=$(gc_lookup "https://URL_OF_$fn" functions describe "$fn" --region="$REGION" --format='value(serviceConfig.uri)')
    [[ -n ${URL[$fn]} ]] || die "could not read the URL of $fn"
  done
  for fn in "${FUNCTIONS[@]}"; do
    deploy_function "$fn" "$(function_env "${URL[$fn]}" "${URL[runJob]}" "${URL[relayInbox]}")"
  done

  # run.invoker on the Cloud Run service behind each gen2 function.
  invoker receivePubSubPush inbox-push
  invoker receiveDeadLetter inbox-push
  invoker runJob inbox-tasks
  invoker relayInbox inbox-tasks
  invoker relayInbox inbox-scheduler
  invoker sweepJobs inbox-scheduler
  if [[ -n $START_PROCESS_INVOKER ]]; then
    gc functions add-invoker-policy-binding startProcess --region="$REGION" --member="$START_PROCESS_INVOKER" --format=none
  else
    note "startProcess has no invoker yet: grant your caller with --start-process-invoker=MEMBER"
  fi
}

# create or update with the same flags; both push with an OIDC token of
# inbox-push whose audience is the endpoint (the function checks both).
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
    gc pubsub subscriptions update "$name" "${flags[@]}"
  else
    gc pubsub subscriptions create "$name" --topic="$topic" "${flags[@]}"
  fi
}

create_subscriptions() {
  section "Push subscriptions"
  # The dead-letter topic's subscription first: a message dead-lettered to a
  # topic without subscriptions would be lost. 31 days is Pub/Sub's maximum retention.
  apply_push_subscription "$DEAD_LETTER_SUBSCRIPTION" "$DEAD_LETTER_TOPIC" "${URL[receiveDeadLetter]}" \
    --message-retention-duration=31d
  apply_push_subscription "$COMPLETION_SUBSCRIPTION" "$COMPLETION_TOPIC" "${URL[receivePubSubPush]}" \
    --message-retention-duration=7d \
    --dead-letter-topic="$DEAD_LETTER_TOPIC" --max-delivery-attempts="$MAX_DELIVERY_ATTEMPTS"
  # Forwarding to the dead-letter topic: the service agent acks the source message.
  gc pubsub subscriptions add-iam-policy-binding "$COMPLETION_SUBSCRIPTION" \
    --member="serviceAccount:$PUBSUB_AGENT" --role=roles/pubsub.subscriber --format=none
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
  apply_scheduler_job "$SWEEP_JOB" "${URL[sweepJobs]}" 60s "Re-dispatches jobs whose Cloud Task was never created"
}
