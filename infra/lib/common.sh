# shellcheck shell=bash
# Helpers shared by the deploy sections: the dry-run aware command runner,
# existence checks and look-ups. Sourced by infra/deploy.sh, never run alone.
#
# Every command that changes something goes through `run`, which prints it
# (prefixed "+ ") and, unless DRY_RUN=true, executes it. Read-only calls
# (describe, list) go through `exists` and `lookup`, which in a dry run do
# not call anything at all: `exists` answers "no" (so the create commands are
# printed) and `lookup` answers a placeholder such as PROJECT_NUMBER.

# Prints a command as "+ cmd arg ...", quoting the arguments that need it so
# that the line can be pasted into a shell (no subshell per argument: a dry
# run prints hundreds of them).
show_cmd() {
  local line='+' arg
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
      line+=" $arg"
    else
      line+=" '${arg//\'/\'\\\'\'}'"
    fi
  done
  printf '%s\n' "$line"
}

# Section headers and notes go to stdout as comments, so a dry run reads like a script.
section() { printf '\n# === %s\n' "$*"; }
note() { printf '# %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() {
  printf 'error: %s\n' "$1" >&2
  exit "${2:-1}"
}

# Runs a command that changes something (printed first; skipped in a dry run).
run() {
  show_cmd "$@"
  [[ $DRY_RUN == true ]] && return 0
  "$@"
}

# gcloud with the target project, through `run`.
gc() { run gcloud "$@" --project="$PROJECT"; }

# True if a read-only gcloud command succeeds (e.g. a describe). Always false
# in a dry run, which then prints the create branch without calling gcloud.
gc_exists() {
  [[ $DRY_RUN == true ]] && return 1
  gcloud "$@" --project="$PROJECT" >/dev/null 2>&1
}

# Output of a read-only gcloud command; the placeholder (first argument) in a dry run.
gc_lookup() {
  local placeholder=$1
  shift
  if [[ $DRY_RUN == true ]]; then
    printf '%s' "$placeholder"
    return 0
  fi
  gcloud "$@" --project="$PROJECT"
}

# Retries a `run` command in real mode: some resources (log-based metric
# descriptors, a new service agent) take a moment to become visible.
run_retry() {
  local attempt
  for attempt in 1 2 3 4; do
    if run "$@"; then return 0; fi
    [[ $attempt == 4 ]] && break
    warn "attempt $attempt failed; retrying in $((attempt * 15))s"
    sleep $((attempt * 15))
  done
  return 1
}

# The project's dedicated service accounts: SA[name] is the email (set by init_service_account_names).
declare -A SA=()
SERVICE_ACCOUNTS=(inbox-receiver inbox-relay inbox-jobs inbox-console inbox-push inbox-tasks inbox-relay-tasks inbox-scheduler inbox-build)
init_service_account_names() {
  local name
  for name in "${SERVICE_ACCOUNTS[@]}"; do
    # shellcheck disable=SC2034 # read by the other sections
    SA[$name]="$name@$PROJECT.iam.gserviceaccount.com"
  done
}

# The small JSON helper (node is required by the repository anyway).
json_tool() { node "$INFRA_DIR/lib/json-tool.js" "$@"; }
