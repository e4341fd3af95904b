# shellcheck shell=bash
# Project-level resources: APIs, Firestore, service accounts, topics, queues
# and the IAM bindings between them. Sourced by infra/deploy.sh.

enable_apis() {
  section "APIs"
  # Cloud Functions gen2 builds with Cloud Build into Artifact Registry and
  # runs on Cloud Run; Eventarc is enabled by gen2 deploys even for HTTP functions.
  gc services enable \
    firestore.googleapis.com \
    pubsub.googleapis.com \
    cloudfunctions.googleapis.com \
    run.googleapis.com \
    cloudbuild.googleapis.com \
    artifactregistry.googleapis.com \
    eventarc.googleapis.com \
    cloudtasks.googleapis.com \
    cloudscheduler.googleapis.com \
    logging.googleapis.com \
    monitoring.googleapis.com \
    cloudtrace.googleapis.com \
    iam.googleapis.com \
    cloudresourcemanager.googleapis.com \
    serviceusage.googleapis.com \
    firebaserules.googleapis.com \
    storage.googleapis.com
  # The Pub/Sub service agent signs push tokens and moves messages to the
  # dead-letter topic; create it now so the bindings below find it.
  gc beta services identity create --service=pubsub.googleapis.com
}

setup_firestore() {
  section "Firestore (Native mode)"
  if gc_exists firestore databases describe --database='(default)'; then
    note "database (default) exists"
  else
    gc firestore databases create --database='(default)' --location="$FIRESTORE_LOCATION" --type=firestore-native
  fi

  # Composite indexes of firestore.indexes.json that do not exist yet. A
  # second create of an existing index fails, so compare with the list first.
  local existing="" line
  if [[ $DRY_RUN != true ]]; then
    existing="$WORK_DIR/indexes.json"
    gcloud firestore indexes composite list --database='(default)' --format=json --project="$PROJECT" >"$existing"
  fi
  local -a parts fields
  local missing overrides ttls
  # Captured first, so a bad JSON file stops the script (set -e) before anything is created.
  missing=$(json_tool indexes "$REPO_ROOT/firestore.indexes.json" ${existing:+"$existing"})
  overrides=$(json_tool overrides "$REPO_ROOT/firestore.indexes.json")
  ttls=$(json_tool ttls "$REPO_ROOT/firestore.indexes.json")
  # fd 3: nothing inside the loop can eat the list from stdin.
  while read -r -u 3 -a parts; do
    [[ ${#parts[@]} -ge 3 ]] || continue
    fields=()
    for line in "${parts[@]:2}"; do fields+=("--field-config=$line"); done
    # --async: an index builds in the background; the relay answers 503 until it is READY.
    gc firestore indexes composite create --database='(default)' --collection-group="${parts[0]}" \
      --query-scope="${parts[1]}" "${fields[@]}" --async
  done 3<<<"$missing"

  # Single-field index exemptions: growing timestamps and large maps are not
  # indexed (see docs/data-model.md). `fields update` sets the state, so a
  # repeated run changes nothing.
  while read -r -u 3 -a parts; do
    [[ ${#parts[@]} -ge 3 ]] || continue
    gc firestore indexes fields update "${parts[1]}" --database='(default)' --collection-group="${parts[0]}" "${parts[@]:2}"
  done 3<<<"$overrides"

  # TTL policies: every field override with "ttl": true in firestore.indexes.json,
  # the file `firebase deploy --only firestore` reads too, so both paths set the
  # same policies (inbox.expireAt: DONE documents carry processedAt + 7 days).
  # A field whose TTL is ACTIVE or CREATING already is left alone, so a repeated
  # run changes nothing.
  local ttl_state
  while read -r -u 3 -a parts; do
    [[ ${#parts[@]} -eq 2 ]] || continue
    ttl_state=$(gc_lookup "" firestore indexes fields describe "${parts[1]}" --database='(default)' \
      --collection-group="${parts[0]}" --format='value(ttlConfig.state)' 2>/dev/null || true)
    if [[ $ttl_state == ACTIVE || $ttl_state == CREATING ]]; then
      note "TTL on ${parts[0]}.${parts[1]} is $ttl_state"
    else
      gc firestore fields ttls update "${parts[1]}" --database='(default)' --collection-group="${parts[0]}" --enable-ttl
    fi
  done 3<<<"$ttls"
}

RULES_API="https://firebaserules.googleapis.com/v1"
# Seconds between the ruleset attempts grow by this much (the tests set 0).
RULES_RETRY_SECONDS=${RULES_RETRY_SECONDS:-15}

# Prints a Firebase Rules API call as a line that can be pasted: gcloud
# prints the token into a pipe, sed makes it a header line and curl reads
# its headers from stdin (-H @-, curl 7.55 and later). The token is never an
# argument of any process, where ps and /proc show it to every user, nor in
# this output or a log.
show_rules_call() {
  local line
  line=$(show_cmd curl -H @- "$@")
  printf '+ gcloud auth print-access-token | sed %s | %s\n' "'s/^/Authorization: Bearer /'" "${line#+ }"
}

# One Firebase Rules API call: METHOD URL BODY_FILE (or "") RESPONSE_FILE.
# Prints the call; in real mode runs it with the header file deploy_rules
# wrote (RULES_AUTH_HEADER), the HTTP status in RESPONSE_FILE.status.
rules_call() {
  local method=$1 url=$2 body=$3 out=$4
  local -a args=(--silent --show-error -X "$method" -H "x-goog-user-project: $PROJECT" -H 'Content-Type: application/json')
  [[ -n $body ]] && args+=(--data-binary "@$body")
  args+=("$url")
  # A GET only looks (like gc_exists): not printed, not made in a dry run.
  [[ $method == GET ]] || show_rules_call "${args[@]}"
  [[ $DRY_RUN == true ]] && return 0
  # No --fail: an error's body says why, and the caller reports it. A transport error is status 000.
  # The token goes in a header file (-H @FILE), never on the command line, where ps and /proc show it.
  curl -o "$out" -w '%{http_code}' -H "@$RULES_AUTH_HEADER" "${args[@]}" >"$out.status" || true
}

rules_status() { cat "$1.status" 2>/dev/null || printf '000'; }

# Security rules (firestore.rules: deny every client SDK; only server SDKs
# with IAM reach the data). gcloud has no command for them, so they go
# through the Firebase Rules REST API: a new ruleset from the file, then the
# release cloud.firestore (the (default) database's rules) points at it.
# Any failure stops the deploy: a project without them is open to clients
# under the default rules of its creation mode.
deploy_rules() {
  section "Firestore security rules (Firebase Rules API; gcloud has none)"
  local body="$WORK_DIR/ruleset.json" release_body="$WORK_DIR/release.json" out="$WORK_DIR/rules-response.json"
  local release="projects/$PROJECT/releases/cloud.firestore" ruleset status RULES_AUTH_HEADER
  json_tool ruleset firestore.rules >"$body"
  if [[ $DRY_RUN == true ]]; then
    note "ruleset body (a temporary file): {\"source\":{\"files\":[{\"name\":\"firestore.rules\",\"content\":<firestore.rules>}]}}"
    rules_call POST "$RULES_API/projects/$PROJECT/rulesets" "$body" "$out"
    ruleset="projects/$PROJECT/rulesets/RULESET_ID"
    printf '{"name":"%s","rulesetName":"%s"}' "$release" "$ruleset" >"$release_body"
    note "release body: $(cat "$release_body")   (an existing release is updated instead: PATCH $RULES_API/$release)"
    rules_call POST "$RULES_API/projects/$PROJECT/releases" "$release_body" "$out"
    return 0
  fi

  local token
  token=$(gcloud auth print-access-token) || die "gcloud auth print-access-token failed: run 'gcloud auth login' and deploy again"
  RULES_AUTH_HEADER="$WORK_DIR/rules-auth-header"
  # Only this user can read it; WORK_DIR is removed when the script exits. printf is a builtin: no process sees the token.
  (umask 077 && printf 'Authorization: Bearer %s\n' "$token" >"$RULES_AUTH_HEADER")
  unset token
  # Retried: right after `services enable` the API can answer 403 for a minute or two.
  local attempt
  for attempt in 1 2 3 4; do
    rules_call POST "$RULES_API/projects/$PROJECT/rulesets" "$body" "$out"
    status=$(rules_status "$out")
    [[ $status == 200 || $attempt == 4 ]] && break
    warn "creating the ruleset answered HTTP $status (attempt $attempt); retrying in $((attempt * RULES_RETRY_SECONDS))s"
    sleep $((attempt * RULES_RETRY_SECONDS))
  done
  [[ $status == 200 ]] || die "creating the ruleset from firestore.rules failed (HTTP $status, 4 attempts): $(cat "$out" 2>/dev/null). Check that firebaserules.googleapis.com is enabled and that you may edit rules (roles/firebaserules.admin), then deploy again"
  ruleset=$(json_tool get "$out" name)

  # The release exists after the first deploy (or one made in the console): update it then.
  rules_call GET "$RULES_API/$release" "" "$out"
  if [[ $(rules_status "$out") == 200 ]]; then
    printf '{"release":{"name":"%s","rulesetName":"%s"},"updateMask":"rulesetName"}' "$release" "$ruleset" >"$release_body"
    rules_call PATCH "$RULES_API/$release" "$release_body" "$out"
  else
    printf '{"name":"%s","rulesetName":"%s"}' "$release" "$ruleset" >"$release_body"
    rules_call POST "$RULES_API/projects/$PROJECT/releases" "$release_body" "$out"
  fi
  status=$(rules_status "$out")
  [[ $status == 200 ]] || die "releasing $ruleset as cloud.firestore failed (HTTP $status): $(cat "$out" 2>/dev/null). The rules are not in force; fix the cause and deploy again"
  note "rules in force: $ruleset"
}

create_service_accounts() {
  section "Service accounts (one per role, least privilege)"
  local name
  local -A purpose=(
    [inbox-receiver]="Runs receivePubSubPush and receiveDeadLetter"
    [inbox-relay]="Runs relayInbox"
    [inbox-jobs]="Runs startProcess, runJob, fireTimer and sweepJobs"
    [inbox-console]="Runs inboxConsole, the operator console"
    [inbox-push]="OIDC identity of the push subscriptions"
    [inbox-tasks]="OIDC identity of the job and timer tasks (invokes runJob and fireTimer only)"
    [inbox-relay-tasks]="OIDC identity of the fast-path relay tasks (invokes relayInbox only)"
    [inbox-scheduler]="OIDC identity of Cloud Scheduler"
    [inbox-build]="Cloud Build identity that builds the functions"
  )
  for name in "${SERVICE_ACCOUNTS[@]}"; do
    if gc_exists iam service-accounts describe "${SA[$name]}"; then
      note "service account $name exists"
    else
      gc iam service-accounts create "$name" --display-name="$name" --description="${purpose[$name]}"
    fi
  done
}

# The app's topics (infra/lib/app.sh): those its messages arrive on, its
# dead-letter topic and those its steps publish to.
create_topics() {
  section "Pub/Sub topics (the app's)"
  local topic
  for topic in "${TOPICS[@]}"; do
    if gc_exists pubsub topics describe "$topic"; then
      note "topic $topic exists"
    else
      gc pubsub topics create "$topic"
    fi
  done
}

# create or update: both take the same retry flags.
apply_queue() {
  local queue=$1
  shift
  if gc_exists tasks queues describe "$queue" --location="$REGION"; then
    gc tasks queues update "$queue" --location="$REGION" "$@"
  else
    gc tasks queues create "$queue" --location="$REGION" "$@"
  fi
}

create_queues() {
  section "Cloud Tasks queues"
  # Created before the functions: they enqueue as soon as traffic arrives.
  # process-jobs: maxAttempts stays ABOVE INBOX_JOB_MAX_ATTEMPTS, so runJob
  # marks a job FAILED (an incident with an ERROR log) before Cloud Tasks
  # would silently drop the task.
  apply_queue "$JOBS_QUEUE" --max-attempts="$JOBS_QUEUE_MAX_ATTEMPTS" --min-backoff=1s --max-backoff=300s --max-doublings=5
  # process-timers: one task per timer, dispatched at its due time. fireTimer
  # answers 503 while Firestore fails and 503 + Retry-After to a task that
  # came early (clock skew), so the retries ride out an outage of minutes; a
  # task that gives up loses nothing: sweepJobs fires a timer still PENDING
  # past its due time + INBOX_SWEEP_GRACE_MS. 100 dispatches/s keeps a burst
  # of timers due together (a batch started at once) near the rate new
  # Firestore traffic should start at, as for the fast path.
  apply_queue "$TIMERS_QUEUE" --max-attempts=20 --min-backoff=1s --max-backoff=60s --max-dispatches-per-second=100
  # inbox-relay: fast-path tasks only; if they give up, the scheduled relay
  # picks the message up. 100 dispatches/s (~600 Firestore writes/s of
  # correlations) keeps a burst near the rate new Firestore traffic should
  # start at; what waits is relayed by the schedule. Raise it with the traffic.
  apply_queue "$RELAY_QUEUE" --max-attempts=5 --min-backoff=1s --max-backoff=60s --max-dispatches-per-second=100
}

# Removes actAs (serviceAccountUser) on account $1 from account $2 if an
# earlier version of this script granted it. A dry run prints the removal.
revoke_account_user_if_present() {
  local account=${SA[$1]} member="serviceAccount:${SA[$2]}" policy="$WORK_DIR/account-policy.json" found
  if [[ $DRY_RUN != true ]]; then
    gcloud iam service-accounts get-iam-policy "$account" --format=json --project="$PROJECT" >"$policy"
    found=$(json_tool has-binding "$policy" roles/iam.serviceAccountUser "$member")
    [[ $found == yes ]] || return 0
  fi
  gc iam service-accounts remove-iam-policy-binding "$account" --member="$member" --role=roles/iam.serviceAccountUser --format=none
}

grant_iam() {
  section "IAM (roles on the narrowest resource that works)"
  local member sa
  # Firestore access has no finer IAM scope than the project.
  # inbox-console reads everything the console shows and writes the repairs.
  for sa in inbox-receiver inbox-relay inbox-jobs inbox-console; do
    gc projects add-iam-policy-binding "$PROJECT" --member="serviceAccount:${SA[$sa]}" \
      --role=roles/datastore.user --condition=None --format=none
    # Spans go to Cloud Trace (INBOX_TRACE_EXPORTER defaults to cloud-trace on Cloud Run); the agent role only writes them.
    gc projects add-iam-policy-binding "$PROJECT" --member="serviceAccount:${SA[$sa]}" \
      --role=roles/cloudtrace.agent --condition=None --format=none
  done

  # Enqueue rights per queue: the receiver creates fast-path tasks, the relay
  # and the job functions create job tasks.
  gc tasks queues add-iam-policy-binding "$RELAY_QUEUE" --location="$REGION" \
    --member="serviceAccount:${SA[inbox-receiver]}" --role=roles/cloudtasks.enqueuer --format=none
  # Every function that moves a token may set a timer: the same two create timer tasks.
  # So may the console: a repair (move token, resolve incident) creates jobs and timers and dispatches them at once.
  for sa in inbox-relay inbox-jobs inbox-console; do
    gc tasks queues add-iam-policy-binding "$JOBS_QUEUE" --location="$REGION" \
      --member="serviceAccount:${SA[$sa]}" --role=roles/cloudtasks.enqueuer --format=none
    gc tasks queues add-iam-policy-binding "$TIMERS_QUEUE" --location="$REGION" \
      --member="serviceAccount:${SA[$sa]}" --role=roles/cloudtasks.enqueuer --format=none
  done

  # A task with an OIDC token needs actAs on the token's account. The
  # receiver signs only fast-path tasks (inbox-relay-tasks, which may invoke
  # relayInbox alone); the relay and the job functions sign only job tasks
  # (inbox-tasks, the one account runJob accepts), and so does the console for
  # the jobs of a repair. So the receiver, the one function that takes
  # outside input, can never mint a runJob call.
  gc iam service-accounts add-iam-policy-binding "${SA[inbox-relay-tasks]}" \
    --member="serviceAccount:${SA[inbox-receiver]}" --role=roles/iam.serviceAccountUser --format=none
  for sa in inbox-relay inbox-jobs inbox-console; do
    gc iam service-accounts add-iam-policy-binding "${SA[inbox-tasks]}" \
      --member="serviceAccount:${SA[$sa]}" --role=roles/iam.serviceAccountUser --format=none
  done
  # An earlier version of this script let the receiver act as inbox-tasks.
  revoke_account_user_if_present inbox-tasks inbox-receiver

  # The build identity (--build-service-account): new projects no longer let
  # Cloud Build use a default account with broad rights. It writes build
  # logs, pushes the image to Artifact Registry and reads the uploaded
  # source. The repository and the source bucket are created by the first
  # deploy, so the roles are on the project.
  for role in roles/logging.logWriter roles/artifactregistry.writer roles/storage.objectAdmin; do
    gc projects add-iam-policy-binding "$PROJECT" --member="serviceAccount:${SA[inbox-build]}" \
      --role="$role" --condition=None --format=none
  done

  # The app's steps run in runJob (inbox-jobs) and publish to the topics the
  # app declares (publishes): publisher on each of those, and no other.
  local topic
  for topic in "${PUBLISH_TOPICS[@]}"; do
    gc pubsub topics add-iam-policy-binding "$topic" \
      --member="serviceAccount:${SA[inbox-jobs]}" --role=roles/pubsub.publisher --format=none
  done

  # The Pub/Sub service agent forwards messages to the dead-letter topic
  # (publisher on it). Projects that enabled Pub/Sub before 2021-04-08 also
  # need it to mint the push OIDC tokens as inbox-push (token creator, granted
  # on that one account only; harmless for newer projects).
  member="serviceAccount:$PUBSUB_AGENT"
  gc pubsub topics add-iam-policy-binding "$DEAD_LETTER_TOPIC" --member="$member" --role=roles/pubsub.publisher --format=none
  gc iam service-accounts add-iam-policy-binding "${SA[inbox-push]}" \
    --member="$member" --role=roles/iam.serviceAccountTokenCreator --format=none
}
