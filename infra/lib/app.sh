# shellcheck shell=bash
# The app the deployment runs: its folder (--app, else INBOX_APP, else the
# CLI's default app), its topology as the inbox CLI prints it
# (`inbox --json app`) and what the upload of the functions holds for it.
# Every topic and subscription name of the deploy comes from here; the
# script itself names none. Sourced by infra/deploy.sh.

# Set by read_app from the app's topology.
APP_FOLDER=""
APP_NAME=""
APP_JSON=""
INBOUND_TOPICS=()
INBOUND_SUBSCRIPTIONS=()
DEAD_LETTER_TOPIC=""
DEAD_LETTER_SUBSCRIPTION=""
PUBLISH_TOPICS=()
# Every topic the deploy creates, once each: inbound, dead-letter, published to.
TOPICS=()
# The ignore file of the functions' upload (upload_ignore_file), relative to the repository root.
UPLOAD_IGNORE_FILE=""
# How many of the app's files the upload carries besides its models folder.
UPLOAD_FILE_COUNT=0

# A folder as INBOX_APP takes it: relative to the repository root, no blanks,
# no part that starts with a dot (so no "..").
APP_FOLDER_PATTERN='^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$'

# Called by deploy.sh's validate_args: a folder that is no folder of the
# repository is a usage error, before anything is created or printed.
validate_app_arg() {
  local from=$1
  [[ -n $APP ]] || return 0
  APP=${APP%/}
  if ! [[ $APP =~ $APP_FOLDER_PATTERN ]]; then
    usage_error "$from '$APP' is not an app folder: give its path relative to the repository root, e.g. --app=apps/my-process"
  fi
  [[ -f $REPO_ROOT/$APP/index.ts ]] ||
    usage_error "$from '$APP': there is no $APP/index.ts in the repository ($REPO_ROOT); an app is a folder whose index.ts ends with \`export default defineApp({ … })\`"
}

# Reads the app with the inbox CLI (`inbox --json app`), which loads it and
# checks it against its models as every function start does; a refusal
# stops the deploy here, with the CLI's line naming the app's file and what
# to do (for a model, every model's line too: check_models). The CLI runs
# from source through tsx (a devDependency): it loads the app's own
# index.ts, as Cloud Build's `npm run gcp-build` does, so no earlier build
# (of another app, or an older version) answers instead.
# INBOX_BPMN_DIR is a local override the deployed functions never get: unset.
read_app() {
  local tsx="$REPO_ROOT/node_modules/.bin/tsx"
  [[ -x $tsx ]] || die "reading the app needs the repository's packages (the inbox CLI runs from source through tsx): run 'npm ci' in $REPO_ROOT, then deploy again"
  local -a env=(env -u INBOX_BPMN_DIR)
  if [[ -n $APP ]]; then env+=("INBOX_APP=$APP"); else env+=(-u INBOX_APP); fi
  APP_JSON="$WORK_DIR/app.json"
  if ! "${env[@]}" "$tsx" "$REPO_ROOT/functions/src/cli/main.ts" --json app >"$APP_JSON" 2>"$WORK_DIR/app.err"; then
    die "the app ${APP:-(the default)} does not load, nothing was deployed: $(tr '\n' ' ' <"$WORK_DIR/app.err")$(check_models "$tsx")"
  fi
  local lines kind a b
  # Captured first, so a topology json-tool refuses stops the run (set -e).
  lines=$(json_tool app-topology "$APP_JSON")
  while read -r -u 3 kind a b; do
    case $kind in
      folder) APP_FOLDER=$a ;;
      name) APP_NAME=$a ;;
      inbound)
        INBOUND_TOPICS+=("$a")
        INBOUND_SUBSCRIPTIONS+=("$b")
        ;;
      dead-letter)
        DEAD_LETTER_TOPIC=$a
        DEAD_LETTER_SUBSCRIPTION=$b
        ;;
      publishes) PUBLISH_TOPICS+=("$a") ;;
      *) die "json-tool app-topology printed an unknown line: $kind $a $b" ;;
    esac
  done 3<<<"$lines"
  local topic
  local -A seen=()
  for topic in "${INBOUND_TOPICS[@]}" "$DEAD_LETTER_TOPIC" "${PUBLISH_TOPICS[@]}"; do
    [[ -n ${seen[$topic]:-} ]] && continue
    seen[$topic]=1
    TOPICS+=("$topic")
  done
}

# When `inbox app` refused the app for one of its models, its line names
# that .bpmn file (relative to the repository root) and the parser's first
# refusal only. This adds every model of that folder (the `*.bpmn` a start
# loads) through `inbox model check`: one line per file, whether it loads
# or which element is refused, its kind and what to do, so one run shows
# every model to fix. Prints nothing for any other refusal. Argument: tsx.
check_models() {
  local tsx=$1 model folder lines
  model=$(grep -o -E '[^ :]+\.bpmn: ' "$WORK_DIR/app.err" | head -n 1) || return 0
  [[ -n $model ]] || return 0
  folder=$(dirname -- "${model%: }")
  local -a files=()
  if [[ -d $folder ]]; then
    mapfile -t files < <(find "$folder" -maxdepth 1 -name '*.bpmn' | LC_ALL=C sort)
  fi
  ((${#files[@]} > 0)) || return 0
  # Exit 1 is its answer when a model is refused; its stderr line only counts what stdout lists.
  lines=$(env -u INBOX_BPMN_DIR "$tsx" "$REPO_ROOT/functions/src/cli/main.ts" model check "${files[@]}" 2>/dev/null) || true
  [[ -n $lines ]] || return 0
  printf '\n  every model of %s (inbox model check):\n    %s' "$folder" "${lines//$'\n'/$'\n    '}"
}

# The upload of `gcloud functions deploy` is the repository minus
# infra/gcloudignore, which leaves out every app; this writes a copy that
# lets back in what the build and the functions need of the deployed app
# (infra/lib/app-files.js): its models folder and the files its bundle
# takes, not its tests or tooling, nor any other app. Level by level:
# gcloud never takes a file whose folder it ignores, so "!/a/b" needs "!/a"
# and "/a/*" before it; and no trailing slash, since its zip step tests
# each folder as if it were a file, which "!/a/b/" would not let back in.
# Generated, under infra/.generated/ (not in git, not uploaded), at a path
# that stays after the run, so a dry run's commands can be pasted.
upload_ignore_file() {
  local file="infra/.generated/upload/$APP_FOLDER.gcloudignore" listing kind path models="" tmp
  local -a files=()
  listing=$(node "$INFRA_DIR/lib/app-files.js" "$APP_JSON" 2>"$WORK_DIR/app-files.err") ||
    die "the app in $APP_FOLDER cannot be uploaded, nothing was deployed: $(tr '\n' ' ' <"$WORK_DIR/app-files.err")"
  while read -r -u 3 kind path; do
    case $kind in
      models) models=$path ;;
      file) files+=("$path") ;;
      *) die "app-files.js printed an unknown line: $kind $path" ;;
    esac
  done 3<<<"$listing"
  [[ -n $models ]] || die "app-files.js named no models folder for $APP_FOLDER"
  UPLOAD_FILE_COUNT=${#files[@]}
  mkdir -p "$(dirname -- "$REPO_ROOT/$file")"
  tmp=$(mktemp "$REPO_ROOT/$file.XXXXXX")
  {
    printf '# Generated by infra/deploy.sh for the app in %s: infra/gcloudignore, then what the\n' "$APP_FOLDER"
    printf '# build and the functions need of that app let back in (infra/lib/app-files.js).\n'
    printf '# Edit infra/gcloudignore, never this file: the next deploy writes it again.\n\n'
    cat "$INFRA_DIR/gcloudignore"
    printf '\n# The app (%s): its models folder and the files its bundle takes, level by level.\n' "$APP_FOLDER"
    local -A opened=()
    let_back_in "$models"
    for path in "${files[@]}"; do
      # A file in the models folder came back in with it.
      [[ $path == "$models"/* ]] || let_back_in "$path"
    done
  } >"$tmp"
  # A rename: a dry run beside this one (another app's, or the same) never reads half a file.
  mv -f -- "$tmp" "$REPO_ROOT/$file"
  UPLOAD_IGNORE_FILE=$file
}

# The lines that let PATH (a file or a folder, relative to the repository
# root) back into the upload: each folder above it not yet opened (the
# caller's `opened`) is let in with its content left out ("!/a", "/a/*"),
# then PATH itself.
let_back_in() {
  local path=$1 prefix="" part
  local -a parts=()
  IFS='/' read -r -a parts <<<"$path"
  unset 'parts[${#parts[@]}-1]'
  for part in "${parts[@]}"; do
    prefix=${prefix:+$prefix/}$part
    [[ -n ${opened[$prefix]:-} ]] && continue
    opened[$prefix]=1
    printf '!/%s\n/%s/*\n' "$prefix" "$prefix"
  done
  printf '!/%s\n' "$path"
}

describe_app() {
  section "App"
  note "app $APP_NAME from $APP_FOLDER (inbox --json app); every function gets INBOX_APP=$APP_FOLDER, at build and at run time"
  local i
  for i in "${!INBOUND_TOPICS[@]}"; do
    note "topic ${INBOUND_TOPICS[$i]} -> push subscription ${INBOUND_SUBSCRIPTIONS[$i]} -> receivePubSubPush"
  done
  note "dead letters: topic $DEAD_LETTER_TOPIC -> push subscription $DEAD_LETTER_SUBSCRIPTION -> receiveDeadLetter"
  note "its steps publish to: ${PUBLISH_TOPICS[*]:-(no topic)}"
  note "upload: $UPLOAD_IGNORE_FILE (infra/gcloudignore, with the app's models and the $UPLOAD_FILE_COUNT files its bundle takes let back in)"
}
