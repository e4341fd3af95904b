# shellcheck shell=bash
# Log-based metrics, alert policies, the dashboard and the optional email
# channel, all from the files under infra/monitoring/. Sourced by infra/deploy.sh.
#
# The files name no app: where they select or name the app's subscriptions
# they hold placeholders ({{PUSH_SUBSCRIPTIONS_REGEX}}, {{DEAD_LETTER_TOPIC}},
# ...: json-tool.js placeholders() lists them), which fill_monitoring puts the
# app's names in for (json-tool fill), into copies under WORK_DIR: those are
# what gcloud is given. A dry run fills them too (so a bad file stops it) but
# prints the repository's file, with a note of what goes in.

MONITORING_DIR="infra/monitoring"
FILLED_DIR=""
# --runbook-url: the absolute URL of docs/runbook.md (e.g. on GitHub). The
# alert texts name their runbook section as docs/runbook.md#anchor, which
# opens nowhere outside the repository; with the URL each becomes a link.
# Set here, before parse_args runs, so deploy.sh needs no default of its own.
RUNBOOK_URL=""

fill_monitoring() {
  FILLED_DIR="$WORK_DIR/monitoring"
  local values
  values=$(json_tool fill "$APP_JSON" "$MONITORING_DIR" "$FILLED_DIR")
  note "the app's names in the files below, for their {{NAME}} placeholders: ${values//$'\n'/; }"
}

# The file gcloud is given for FILE of infra/monitoring: its filled copy
# (FILE itself in a dry run, which shows the repository's file).
applied() {
  if [[ $DRY_RUN == true ]]; then printf '%s' "$1"; else printf '%s' "$FILLED_DIR/${1#"$MONITORING_DIR"/}"; fi
}

apply_log_metrics() {
  local file name
  # The file name is the metric name (the test checks it matches the "name" field).
  for file in "$MONITORING_DIR"/metrics/*.json; do
    name=$(basename "$file" .json)
    if gc_exists logging metrics describe "$name"; then
      gc logging metrics update "$name" --config-from-file="$(applied "$file")"
    else
      gc logging metrics create "$name" --config-from-file="$(applied "$file")"
    fi
  done
}

# Sets CHANNEL to the email notification channel (created when missing); empty without --alert-email.
CHANNEL=""
ensure_notification_channel() {
  CHANNEL=""
  [[ -n $ALERT_EMAIL ]] || return 0
  if [[ $DRY_RUN != true ]]; then
    CHANNEL=$(gcloud beta monitoring channels list --filter="type=\"email\" AND labels.email_address=\"$ALERT_EMAIL\"" \
      --format='value(name)' --limit=1 --project="$PROJECT")
  fi
  if [[ -n $CHANNEL ]]; then
    note "notification channel for $ALERT_EMAIL exists: $CHANNEL"
    return 0
  fi
  local -a create=(gcloud beta monitoring channels create --type=email --display-name="Inbox alerts ($ALERT_EMAIL)"
    --channel-labels=email_address="$ALERT_EMAIL" --format='value(name)' --project="$PROJECT")
  show_cmd "${create[@]}"
  if [[ $DRY_RUN == true ]]; then
    CHANNEL="projects/$PROJECT/notificationChannels/CHANNEL_ID"
  else
    CHANNEL=$("${create[@]}")
  fi
}

# The channels a policy should carry: --alert-email's, else (on update) the
# ones it has now, so a rerun without --alert-email keeps channels set by hand.
policy_channels() {
  local existing=$1
  if [[ -n $CHANNEL ]]; then
    printf '["%s"]' "$CHANNEL"
  elif [[ -n $existing ]]; then
    gcloud alpha monitoring policies describe "$existing" --format=json --project="$PROJECT" >"$WORK_DIR/current-policy.json"
    json_tool pick "$WORK_DIR/current-policy.json" notificationChannels
  else
    printf '[]'
  fi
}

# Display names a policy had in an earlier version, by file: a policy found
# under its former name is updated in place (renamed), not left beside a new one.
declare -A FORMER_POLICY_NAMES=(
  [push-subscription-unacked.json]="Inbox: completion message unacked for more than 15 minutes"
)

# The name of the policy whose display name is $1, or "" (none, or a dry run).
policy_named() {
  gc_lookup "" alpha monitoring policies list --filter="displayName=\"$1\"" --format='value(name)' --limit=1
}

apply_alert_policies() {
  local listing file display existing rendered channels former
  listing=$(json_tool get-each displayName "$MONITORING_DIR"/policies/*.json)
  while IFS=$'\t' read -r -u 3 file display; do
    # Policies have generated ids: the display name is the key. gcloud has
    # alert policy commands in alpha only.
    existing=$(policy_named "$display")
    former=${FORMER_POLICY_NAMES[$(basename "$file")]:-}
    if [[ -z $existing && -n $former ]]; then
      existing=$(policy_named "$former")
      [[ -z $existing ]] || note "$file: the policy \"$former\" is this one, renamed: updated in place"
    fi
    # The files carry no channels (they differ per project); they are added to
    # the filled copy, which is what gcloud reads (a dry run shows the original).
    channels=$(policy_channels "$existing")
    rendered=$(applied "$file")
    if [[ $DRY_RUN == true ]]; then
      note "$file: applied with \"notificationChannels\": $channels"
      if [[ -n $RUNBOOK_URL ]]; then
        # Rendered all the same (local work only), so a dry run shows the links and checks the URL.
        note "$file: runbook links: $(json_tool runbook-links "$file" "$WORK_DIR/$(basename "$file")" "$RUNBOOK_URL" | tr '\n' ' ')"
      fi
    else
      json_tool render "$rendered" "$rendered" "notificationChannels=$channels"
      if [[ -n $RUNBOOK_URL ]]; then
        json_tool runbook-links "$rendered" "$rendered" "$RUNBOOK_URL" >/dev/null
      fi
    fi
    if [[ -n $existing ]]; then
      # Replaces the whole policy with the file's content.
      gc alpha monitoring policies update "$existing" --policy-from-file="$rendered"
    else
      # A new log-based metric's descriptor can take a minute to appear.
      run_retry gcloud alpha monitoring policies create --policy-from-file="$rendered" --project="$PROJECT"
    fi
  done 3<<<"$listing"
}

apply_dashboards() {
  local listing file display existing etag rendered
  listing=$(json_tool get-each displayName "$MONITORING_DIR"/dashboards/*.json)
  while IFS=$'\t' read -r -u 3 file display; do
    existing=$(gc_lookup "" monitoring dashboards list --filter="displayName=\"$display\"" --format='value(name)' --limit=1)
    if [[ -n $existing ]]; then
      # An update must carry the current etag.
      etag=$(gcloud monitoring dashboards describe "$existing" --format='value(etag)' --project="$PROJECT")
      rendered=$(applied "$file")
      json_tool render "$rendered" "$rendered" "etag=\"$etag\""
      gc monitoring dashboards update "$existing" --config-from-file="$rendered"
    else
      gc monitoring dashboards create --config-from-file="$(applied "$file")"
    fi
  done 3<<<"$listing"
}

# Called by deploy.sh's validate_args, so a bad URL stops the run before anything is created.
validate_runbook_url() {
  if [[ -n $RUNBOOK_URL && ! $RUNBOOK_URL =~ ^https?://[^[:space:]#\"\'\<\>\(\)\`]+$ ]]; then
    usage_error "--runbook-url must be an http(s) URL of docs/runbook.md without a #fragment (the anchor is appended), got '$RUNBOOK_URL'"
  fi
}

apply_monitoring() {
  section "Monitoring: log-based metrics, alert policies, dashboard"
  if [[ -z $RUNBOOK_URL ]]; then
    note "no --runbook-url: the alert texts name their runbook section (docs/runbook.md#...) and carry what the on-call needs"
  fi
  fill_monitoring
  apply_log_metrics
  ensure_notification_channel
  if [[ -z $CHANNEL ]]; then
    note "no --alert-email: new alert policies get no notification channel (existing ones keep theirs)"
  fi
  apply_alert_policies
  apply_dashboards
}
