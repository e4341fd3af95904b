# shellcheck shell=bash
# What the deploy changes under running instances, read from the project's
# Firestore before anything is created (`inbox model impact`): each changed
# model's diff from the newest version stored in processVersions, with the
# tokens, pending jobs, scheduled timers and open user tasks at each removed
# or changed element, and the step handlers the app drops that pending jobs
# still need or that instances of older versions can still reach. Such a
# drop refuses the deploy (the dry run too), naming each handler and its
# count, unless --force, which deploys and says which jobs may become
# incidents. Read only; the CLI runs from source, as read_app's.
# Sourced by infra/deploy.sh.

# Set by parse_args (--force).
FORCE=false

check_impact() {
  section "Impact on running instances"
  local tsx="$REPO_ROOT/node_modules/.bin/tsx" status=0 line why
  local -a env=(env -u INBOX_BPMN_DIR)
  if [[ -n $APP ]]; then env+=("INBOX_APP=$APP"); else env+=(-u INBOX_APP); fi
  env+=("GOOGLE_CLOUD_PROJECT=$PROJECT")
  local -a args=(model impact)
  [[ $FORCE == true ]] && args+=(--force)
  if [[ -n ${FIRESTORE_EMULATOR_HOST:-} ]]; then
    note "read from the Firestore emulator at $FIRESTORE_EMULATOR_HOST (FIRESTORE_EMULATOR_HOST is set), not from project $PROJECT"
  fi
  "${env[@]}" "$tsx" "$REPO_ROOT/functions/src/cli/main.ts" "${args[@]}" >"$WORK_DIR/impact.out" 2>"$WORK_DIR/impact.err" || status=$?
  while IFS= read -r line; do note "$line"; done <"$WORK_DIR/impact.out"
  why=$(tr '\n' ' ' <"$WORK_DIR/impact.err")
  why=${why#inbox: }
  case $status in
    0) ;;
    # Refused (a dropped handler), or the check itself failed: nothing is deployed.
    1) die "${why% }; nothing was deployed" ;;
    # No Firestore database, or no Firestore API yet: a first deploy, nothing runs there.
    4) note "nothing runs in $PROJECT yet (no Firestore database, or its API is off): nothing to check" ;;
    *)
      if [[ $DRY_RUN == true ]]; then
        note "impact not read (a dry run goes on without it): ${why% }"
      elif [[ $FORCE == true ]]; then
        warn "impact not read; --force deploys without it: ${why% }"
      else
        die "the impact on running instances could not be read, nothing was deployed: ${why% } (or deploy with --force, without the check)"
      fi
      ;;
  esac
}
