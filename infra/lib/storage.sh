# shellcheck shell=bash
# Cloud Storage of the claim check: the inbox's own payload bucket (offloaded
# payloads) and read access to the senders' reference buckets. Sourced by
# infra/deploy.sh after the service accounts exist.
#
# Retention is the purge path, not the bucket: sweepJobs deletes the object
# of a DONE offloaded document when its payloadExpireAt has passed, then the
# document; PARKED documents never get one, so their objects stay for good.
# So no lifecycle rule may delete a live object. The rules that are there
# (infra/storage/payload-lifecycle.json) clean up only what nothing reads:
# - AbortIncompleteMultipartUpload after 1 day: the receiver writes single
#   requests, but a multipart upload cut off half way would be billed
#   forever, and no object exists for it.
# - Delete noncurrent versions 1 day after they became noncurrent. Versioning
#   is off (the create default, and this script does not turn it on): every
#   object is written once (createIfAbsent, ifGenerationMatch=0), references
#   are pinned to a generation, and soft delete (7 days) is the undo of a
#   wrong delete. If someone turns versioning on, each delete of the sweep
#   would leave a noncurrent copy billed forever; this rule removes it. With
#   versioning off there are none and the rule does nothing. isLive=false
#   makes it unable to touch a live object.

PAYLOAD_LIFECYCLE_FILE=infra/storage/payload-lifecycle.json
# Soft delete: a deleted object (by the sweep, by hand) can be restored for 7 days.
PAYLOAD_SOFT_DELETE=7d
PAYLOAD_SOFT_DELETE_SECONDS=604800
# The sweep's custom role: read and delete objects, nothing else (no create,
# no overwrite, no bucket settings). objectUser would also let every function
# of inbox-jobs (startProcess, runJob, fireTimer) create and overwrite objects.
# list: an object's 404 is told from a missing bucket's by a one-object listing
# (functions/src/storage/gcs-payload-store.ts), so a sweep into a deleted
# bucket is an error, not an object already gone.
SWEEPER_ROLE_ID=inboxPayloadSweeper
SWEEPER_ROLE_PERMISSIONS=storage.objects.get,storage.objects.list,storage.objects.delete
# The receiver's custom role: create an object and read the metadata of one
# that exists (createIfAbsent on a redelivery: HTTP 412), nothing else; not
# objectViewer, which would also let it list and download every payload.
WRITER_ROLE_ID=inboxPayloadWriter
WRITER_ROLE_PERMISSIONS=storage.objects.create,storage.objects.get

# Bucket names: 3-222 characters of lowercase letters, digits, -, _ and .,
# starting and ending with a letter or digit, not starting with "goog".
# (functions/src/core/gs-uri.ts checks the same at runtime.)
valid_bucket_name() {
  [[ $1 =~ ^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$ && $1 != goog* ]]
}

# PAYLOAD_BUCKET and REFERENCE_BUCKETS (environment): checked before anything
# runs, so a typo stops the deploy with exit 2 instead of half way.
validate_storage_settings() {
  PAYLOAD_BUCKET=${PAYLOAD_BUCKET:-$PROJECT-inbox-payloads}
  valid_bucket_name "$PAYLOAD_BUCKET" ||
    usage_error "PAYLOAD_BUCKET '$PAYLOAD_BUCKET' is not a Cloud Storage bucket name (3-222 of a-z 0-9 - _ ., no gs://)"
  REFERENCE_BUCKET_LIST=()
  local bucket
  local -a given=()
  [[ -n ${REFERENCE_BUCKETS:-} ]] && IFS=, read -r -a given <<<"$REFERENCE_BUCKETS"
  for bucket in "${given[@]}"; do
    bucket=${bucket//[[:space:]]/}
    [[ -n $bucket ]] || continue
    valid_bucket_name "$bucket" ||
      usage_error "REFERENCE_BUCKETS: '$bucket' is not a Cloud Storage bucket name (a comma-separated list of names, no gs://)"
    [[ $bucket != "$PAYLOAD_BUCKET" ]] ||
      usage_error "REFERENCE_BUCKETS names the inbox's own payload bucket $PAYLOAD_BUCKET: list only the senders' buckets"
    REFERENCE_BUCKET_LIST+=("$bucket")
  done
}

# What INBOX_REFERENCE_BUCKETS gets: the cleaned list, comma-separated.
reference_buckets_value() {
  local IFS=,
  printf '%s' "${REFERENCE_BUCKET_LIST[*]}"
}

# The payload bucket: created with its settings, or, when it exists, the
# settings that drifted updated (nothing when none did). Its location cannot
# change: a bucket elsewhere is used as it is, with a warning.
apply_payload_bucket() {
  local bucket="gs://$PAYLOAD_BUCKET" described="$WORK_DIR/payload-bucket.json" drift line
  local -a flags=()
  if [[ $DRY_RUN == true ]] || ! gcloud storage buckets describe "$bucket" --raw --format=json --project="$PROJECT" >"$described" 2>"$described.err"; then
    # Bucket names are global: one taken by another project fails here, not at the describe.
    gc storage buckets create "$bucket" --location="$REGION" \
      --uniform-bucket-level-access --public-access-prevention \
      --soft-delete-duration="$PAYLOAD_SOFT_DELETE" --lifecycle-file="$PAYLOAD_LIFECYCLE_FILE" ||
      die "creating $bucket failed (the describe said: $(head -c 300 "$described.err" 2>/dev/null)). Bucket names are global: if another project has it, set PAYLOAD_BUCKET to another name (and INBOX_PAYLOAD_BUCKET follows) and deploy again"
    return 0
  fi
  # Captured first, so a describe json-tool cannot read stops the run (set -e).
  drift=$(json_tool bucket-drift "$described" "$PAYLOAD_LIFECYCLE_FILE" "$PAYLOAD_SOFT_DELETE_SECONDS")
  while read -r -u 3 line; do
    case $line in
      uniform-access) flags+=(--uniform-bucket-level-access) ;;
      public-access-prevention) flags+=(--public-access-prevention) ;;
      soft-delete) flags+=(--soft-delete-duration="$PAYLOAD_SOFT_DELETE") ;;
      lifecycle) flags+=(--lifecycle-file="$PAYLOAD_LIFECYCLE_FILE") ;;
      "location "*)
        [[ ${line#location } == "${REGION^^}" ]] ||
          warn "$bucket is in ${line#location}, not $REGION: a bucket cannot move; it is used where it is (cross-region traffic is slower and billed)"
        ;;
      "") ;;
      *) die "json-tool bucket-drift printed '$line', which this script does not know" ;;
    esac
  done 3<<<"$drift"
  if ((${#flags[@]} > 0)); then
    note "bucket $bucket exists; drifted: ${flags[*]}"
    gc storage buckets update "$bucket" "${flags[@]}"
  else
    note "bucket $bucket exists with its settings"
  fi
}

# The custom roles on the project (roles are defined per project or
# organization; each is granted on the payload bucket only). A deleted role
# lingers for 7 days and blocks its id: undeleted, then set.
# apply_custom_role ID TITLE DESCRIPTION PERMISSIONS
apply_custom_role() {
  local deleted=""
  local -a settings=(--title="$2" --description="$3" --permissions="$4" --stage=GA)
  if [[ $DRY_RUN != true ]] && deleted=$(gcloud iam roles describe "$1" --format='value(deleted)' --project="$PROJECT" 2>/dev/null); then
    if [[ ${deleted,,} == true ]]; then gc iam roles undelete "$1" --format=none; fi
    # update sets the whole permission list: one added or removed by hand is put back.
    gc iam roles update "$1" "${settings[@]}" --format=none
  else
    gc iam roles create "$1" "${settings[@]}" --format=none
  fi
}

apply_payload_roles() {
  apply_custom_role "$SWEEPER_ROLE_ID" "Inbox payload sweeper" "Reads and deletes inbox payload objects (sweepJobs)" "$SWEEPER_ROLE_PERMISSIONS"
  SWEEPER_ROLE="projects/$PROJECT/roles/$SWEEPER_ROLE_ID"
  apply_custom_role "$WRITER_ROLE_ID" "Inbox payload writer" "Creates inbox payload objects, reads their metadata (receivePubSubPush, receiveDeadLetter)" "$WRITER_ROLE_PERMISSIONS"
  WRITER_ROLE="projects/$PROJECT/roles/$WRITER_ROLE_ID"
}

bucket_binding() {
  gc storage buckets add-iam-policy-binding "gs://$1" --member="serviceAccount:${SA[$2]}" --role="$3" --format=none
}

# Least privilege per identity (docs/failure-modes.md says what a missing grant does):
# - inbox-receiver (receivePubSubPush, receiveDeadLetter): the writer role, to
#   write an offloaded payload (create only: it cannot overwrite, delete,
#   list or download) and read the metadata of one that exists (a
#   redelivery). It never deletes an object: one no document names is
#   removed by `inbox repair orphan-payloads`.
# - inbox-relay (relayInbox): nothing on the payload bucket (it stats only the
#   senders' references, never the inbox's own objects).
# - inbox-jobs (runJob: the app's steps read claim-check objects; sweepJobs
#   deletes the objects of purged documents): the sweeper role.
# - inbox-console (inboxConsole): objectViewer. A document's page shows its
#   offloaded payload, so it reads objects; it writes none.
grant_storage_iam() {
  bucket_binding "$PAYLOAD_BUCKET" inbox-receiver "$WRITER_ROLE"
  bucket_binding "$PAYLOAD_BUCKET" inbox-jobs "$SWEEPER_ROLE"
  bucket_binding "$PAYLOAD_BUCKET" inbox-console roles/storage.objectViewer

  # The senders' buckets (REFERENCE_BUCKETS): theirs, never created here. The
  # relay stats a reference's generation, an app's step (runJob) reads it.
  local bucket
  for bucket in "${REFERENCE_BUCKET_LIST[@]}"; do
    if [[ $DRY_RUN != true ]] && ! gcloud storage buckets describe "gs://$bucket" --format='value(name)' --project="$PROJECT" >/dev/null 2>"$WORK_DIR/reference.err"; then
      die "REFERENCE_BUCKETS: gs://$bucket cannot be read ($(head -c 300 "$WORK_DIR/reference.err")). It is the sender's bucket: it must exist, and you need storage.buckets.get and setIamPolicy on it (roles/storage.admin on that bucket) to grant the inbox read access. This script never creates it"
    fi
    bucket_binding "$bucket" inbox-relay roles/storage.objectViewer
    bucket_binding "$bucket" inbox-jobs roles/storage.objectViewer
  done
  ((${#REFERENCE_BUCKET_LIST[@]} > 0)) || note "no REFERENCE_BUCKETS: messages that carry a reference are parked INVALID_PAYLOAD"
}

setup_storage() {
  section "Cloud Storage (claim check: the payload bucket, read access to the senders' buckets)"
  apply_payload_bucket
  apply_payload_roles
  grant_storage_iam
}
