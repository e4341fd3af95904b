#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Deploys the transactional inbox with one app (--app) to one Google Cloud
# project: APIs, Firestore, service accounts, the app's topics, queues, IAM,
# the eight functions, the app's push subscriptions, scheduler jobs, the
# payload bucket and monitoring. Every topic and subscription name comes from
# the app's topology (`inbox --json app`, infra/lib/app.sh).
#
# Idempotent: every resource is looked up first (describe/list) and created
# only when missing, otherwise updated to the state described here; IAM
# bindings and `functions deploy` are idempotent by themselves. Rerun it after
# any change. With --dry-run it prints every command and calls nothing.
set -euo pipefail

if ((BASH_VERSINFO[0] < 4)); then
  echo "error: bash 4 or newer is needed (associative arrays); on macOS: brew install bash" >&2
  exit 1
fi

INFRA_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$INFRA_DIR/.." && pwd)

# Resource names. The functions' defaults (functions/src/config.ts) match
# these; the topics and subscriptions are the app's (infra/lib/app.sh).
JOBS_QUEUE=process-jobs
TIMERS_QUEUE=process-timers
RELAY_QUEUE=inbox-relay
RELAY_JOB=inbox-relay
SWEEP_JOB=inbox-sweep-jobs
# runJob marks a job FAILED after INBOX_JOB_MAX_ATTEMPTS runs; the queue must
# allow more attempts than that, or Cloud Tasks drops the task first. runJob
# is told the queue's maxAttempts too (INBOX_JOBS_QUEUE_MAX_ATTEMPTS): on that
# last attempt it records any failure, also one outside the handler.
JOB_MAX_ATTEMPTS=10
JOBS_QUEUE_MAX_ATTEMPTS=20
# The relay counts, per message name, tokens that have waited this many days or
# longer (INBOX_WAITING_ALERT_DAYS); the alert waiting-too-long.json fires while
# any are. Edit and rerun to change it: --set-env-vars replaces the whole set.
WAITING_ALERT_DAYS=15

usage() {
  cat <<EOF
Usage: infra/deploy.sh --project PROJECT_ID [options]

Deploys (or updates) the transactional inbox in one Google Cloud project.

Options:
  --project ID                  target project (required)
  --app FOLDER                  the app to run: its folder, relative to the repository root
                                (default: INBOX_APP, else the inbox's default app; \`inbox app\`
                                prints the app and the topics and subscriptions it needs)
  --region REGION               functions, queues, scheduler (default: europe-west1)
  --firestore-location LOC      location of a new Firestore database (default: the region;
                                e.g. eur3 for the European multi-region)
  --max-delivery-attempts N     Pub/Sub deliveries before dead-lettering, 5..100 (default: 10)
  --alert-email ADDRESS         email notification channel for the alert policies (optional)
  --runbook-url URL             absolute URL of docs/runbook.md, e.g.
                                https://github.com/ORG/REPO/blob/main/docs/runbook.md: the alert
                                texts then link to their section (URL#anchor) (optional)
  --start-process-invoker M     IAM member allowed to call startProcess, e.g.
                                serviceAccount:orders@PROJECT.iam.gserviceaccount.com (optional)
  --console-viewers EMAILS      comma-separated accounts that may open the operator console
                                (inboxConsole) and look; run.invoker is granted to each (optional)
  --console-repairers EMAILS    the same, for accounts that may also repair from it (optional);
                                docs/runbook.md, "The console", says how to open it
  --dry-run                     print every command (prefixed "+ ") and run nothing, not even
                                look-ups: placeholders such as PROJECT_NUMBER stand in for them;
                                local work only (reading the app, writing the upload's ignore
                                file under infra/.generated/ that the commands name), and one
                                read of the project's Firestore when it can: the impact check
  --force                       deploy even when the impact check refuses (the app drops a step
                                handler that pending jobs still need: they become incidents) or
                                cannot read the project
  -h, --help                    this text

Environment (settings of the claim check, see docs/deploy.md):
  PAYLOAD_BUCKET                the inbox's bucket of offloaded payloads, created in the region
                                (default: PROJECT-inbox-payloads; names are global)
  REFERENCE_BUCKETS             comma-separated senders' buckets a message may reference
                                (INBOX_REFERENCE_BUCKETS); they must exist: the script only
                                grants the relay and the jobs read access (default: none)

Needs: gcloud with the alpha and beta components, node, the repository's packages
(npm ci: the app is read with the inbox CLI from source), and a caller allowed to
administer the project (Owner, or the admin roles of each service plus
Service Account User on the inbox-* accounts, roles/iam.roleAdmin for the
payload bucket's custom roles (sweeper, writer), roles/storage.admin on each REFERENCE_BUCKETS
bucket, and roles/firebaserules.admin for the Firestore security rules), and curl: gcloud has no command for the rules, so
they go through the Firebase Rules REST API with gcloud's access token.
EOF
}

PROJECT=""
# Without --app and INBOX_APP, the CLI's default app runs: examples/work-orders.
APP=${INBOX_APP:-}
APP_FROM=INBOX_APP
REGION="europe-west1"
FIRESTORE_LOCATION=""
MAX_DELIVERY_ATTEMPTS=10
ALERT_EMAIL=""
START_PROCESS_INVOKER=""
CONSOLE_VIEWERS=""
CONSOLE_REPAIRERS=""
DRY_RUN=false

usage_error() {
  printf 'error: %s\n' "$1" >&2
  printf "Run 'infra/deploy.sh --help' for the options.\n" >&2
  exit 2
}

# Options with a value take it as "--opt value" or "--opt=value".
parse_args() {
  local opt value
  local valued='--project|--app|--region|--firestore-location|--max-delivery-attempts|--alert-email|--start-process-invoker|--runbook-url|--console-viewers|--console-repairers'
  while (($# > 0)); do
    opt=$1
    case $opt in
      -h | --help)
        usage
        exit 0
        ;;
      --dry-run)
        DRY_RUN=true
        shift
        continue
        ;;
      --force)
        FORCE=true
        shift
        continue
        ;;
      --*=*)
        value=${opt#*=}
        opt=${opt%%=*}
        shift
        ;;
      *)
        [[ $opt =~ ^($valued)$ ]] || usage_error "unknown option: $opt"
        (($# >= 2)) || usage_error "$opt needs a value"
        value=$2
        shift 2
        ;;
    esac
    case $opt in
      --project) PROJECT=$value ;;
      --app)
        APP=$value
        APP_FROM=--app
        ;;
      --region) REGION=$value ;;
      --firestore-location) FIRESTORE_LOCATION=$value ;;
      --max-delivery-attempts) MAX_DELIVERY_ATTEMPTS=$value ;;
      --alert-email) ALERT_EMAIL=$value ;;
      --start-process-invoker) START_PROCESS_INVOKER=$value ;;
      --runbook-url) RUNBOOK_URL=$value ;;
      --console-viewers) CONSOLE_VIEWERS=$value ;;
      --console-repairers) CONSOLE_REPAIRERS=$value ;;
      *) usage_error "unknown option: $opt" ;;
    esac
  done
}

validate_args() {
  [[ -n $PROJECT ]] || usage_error "--project is required"
  [[ $PROJECT =~ ^[a-z][a-z0-9-]{4,28}[a-z0-9]$ ]] ||
    usage_error "--project '$PROJECT' is not a project id (6-30 lowercase letters, digits, hyphens)"
  [[ $REGION =~ ^[a-z]+-[a-z]+[0-9]+$ ]] || usage_error "--region '$REGION' is not a region such as europe-west1"
  FIRESTORE_LOCATION=${FIRESTORE_LOCATION:-$REGION}
  [[ $FIRESTORE_LOCATION =~ ^[a-z0-9-]+$ ]] || usage_error "--firestore-location '$FIRESTORE_LOCATION' is not a location"
  # Pub/Sub accepts 5..100 delivery attempts for a dead-letter policy.
  if ! [[ $MAX_DELIVERY_ATTEMPTS =~ ^[0-9]+$ ]] || ((10#$MAX_DELIVERY_ATTEMPTS < 5 || 10#$MAX_DELIVERY_ATTEMPTS > 100)); then
    usage_error "--max-delivery-attempts must be a whole number from 5 to 100 (Pub/Sub's limits), got '$MAX_DELIVERY_ATTEMPTS'"
  fi
  MAX_DELIVERY_ATTEMPTS=$((10#$MAX_DELIVERY_ATTEMPTS))
  if [[ -n $ALERT_EMAIL && ! $ALERT_EMAIL =~ ^[^@[:space:]]+@[^@[:space:]]+\.[^@[:space:]]+$ ]]; then
    usage_error "--alert-email '$ALERT_EMAIL' is not an email address"
  fi
  if [[ -n $START_PROCESS_INVOKER && ! $START_PROCESS_INVOKER =~ ^(serviceAccount|user|group|domain):.+$ ]]; then
    usage_error "--start-process-invoker must be an IAM member such as serviceAccount:EMAIL"
  fi
  CONSOLE_VIEWERS=$(console_emails --console-viewers "$CONSOLE_VIEWERS")
  CONSOLE_REPAIRERS=$(console_emails --console-repairers "$CONSOLE_REPAIRERS")
  validate_runbook_url
  validate_storage_settings
  validate_app_arg "$APP_FROM"
  ((JOBS_QUEUE_MAX_ATTEMPTS > JOB_MAX_ATTEMPTS)) || die "the $JOBS_QUEUE queue must allow more attempts than INBOX_JOB_MAX_ATTEMPTS"
}

# A comma list of e-mail addresses without blanks (the console's lists,
# INBOX_CONSOLE_VIEWERS / _REPAIRERS); a usage error naming the flag otherwise.
console_emails() {
  local flag=$1 email
  local -a emails=() kept=()
  IFS=',' read -r -a emails <<<"${2// /}"
  for email in "${emails[@]}"; do
    [[ -n $email ]] || continue
    [[ $email =~ ^[^@[:space:],:]+@[^@[:space:],:]+\.[^@[:space:],:]+$ ]] || usage_error "$flag: '$email' is not an e-mail address (a comma-separated list, no user: prefix)"
    kept+=("$email")
  done
  local IFS=','
  printf '%s' "${kept[*]}"
}

# shellcheck source=lib/common.sh
source "$INFRA_DIR/lib/common.sh"
# shellcheck source=lib/app.sh
source "$INFRA_DIR/lib/app.sh"
# shellcheck source=lib/platform.sh
source "$INFRA_DIR/lib/platform.sh"
# shellcheck source=lib/functions.sh
source "$INFRA_DIR/lib/functions.sh"
# shellcheck source=lib/monitoring.sh
source "$INFRA_DIR/lib/monitoring.sh"
# shellcheck source=lib/storage.sh
source "$INFRA_DIR/lib/storage.sh"
# shellcheck source=lib/impact.sh
source "$INFRA_DIR/lib/impact.sh"

main() {
  parse_args "$@"
  validate_args
  init_service_account_names
  command -v node >/dev/null 2>&1 || die "node is required (it reads the app, firestore.indexes.json and the monitoring files)"
  if [[ $DRY_RUN != true ]]; then
    command -v gcloud >/dev/null 2>&1 || die "gcloud is required (or use --dry-run)"
    command -v curl >/dev/null 2>&1 || die "curl is required (it deploys firestore.rules through the Firebase Rules API)"
    export CLOUDSDK_CORE_DISABLE_PROMPTS=1
  fi
  # --source=. and the monitoring paths are relative to the repository root.
  cd "$REPO_ROOT"
  WORK_DIR=$(mktemp -d)
  trap 'rm -rf "$WORK_DIR"' EXIT
  # Before anything is created or printed: an app that does not load deploys nothing.
  read_app
  upload_ignore_file

  if [[ $DRY_RUN == true ]]; then
    note "dry run: nothing below is executed; look-ups are replaced by placeholders"
  fi
  note "project=$PROJECT region=$REGION firestore-location=$FIRESTORE_LOCATION max-delivery-attempts=$MAX_DELIVERY_ATTEMPTS"
  describe_app
  # Before anything is created: a deploy that would strand pending jobs is refused here.
  check_impact

  enable_apis
  local project_number
  project_number=$(gc_lookup PROJECT_NUMBER projects describe "$PROJECT" --format='value(projectNumber)')
  PUBSUB_AGENT="service-$project_number@gcp-sa-pubsub.iam.gserviceaccount.com"

  setup_firestore
  deploy_rules
  create_service_accounts
  create_topics
  create_queues
  grant_iam
  setup_storage
  deploy_functions
  create_subscriptions
  create_scheduler_jobs
  apply_monitoring

  section "Done"
  note "receivePubSubPush: ${URL[receivePubSubPush]}"
  note "startProcess:      ${URL[startProcess]}"
  note "inboxConsole:      ${URL[inboxConsole]} (open it: npx inbox console --service inboxconsole --region=$REGION)"
}

main "$@"
