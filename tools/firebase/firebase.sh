#!/usr/bin/env bash
# The Firebase CLI (firebase-tools), pinned by this folder's package-lock.json
# and kept out of the root `npm ci`: it brings about 430 packages that nothing
# else needs, and Cloud Build installs the root's devDependencies for every
# function build. Installed here on first use, or when the lock is newer than
# the install, without optional dependencies (.npmrc: omit=optional), so no
# native module is compiled (superstatic's re2 serves Firebase Hosting, which
# this project does not use). Then runs the CLI with the arguments given.
#
#   tools/firebase/firebase.sh deploy --only firestore --project P   (npm run firebase -- deploy …)
#   tools/firebase/firebase.sh --install-only                        (npm test does this first)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
installed="$here/node_modules/.package-lock.json"
if [ ! -f "$installed" ] || [ "$here/package-lock.json" -nt "$installed" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
if [ "${1:-}" = "--install-only" ]; then exit 0; fi
exec node "$here/node_modules/firebase-tools/lib/bin/firebase.js" "$@"
