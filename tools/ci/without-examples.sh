#!/usr/bin/env bash
# The system without any app: a copy of this checkout in a
# temporary directory with examples/ removed, all of it, built with the
# fixture app the system's own tests run (INBOX_APP=test/fixtures/app), then
# checked as CI checks the checkout: the typecheck, the lint (eslint and the
# import rules), the unit project and a few emulator suites that cover each
# way the system loads an app (served functions from dist/, the CLI, the
# console, the local stack with the app's peers). A system file that needs
# an example, by import or by path, fails here.
#
#   tools/ci/without-examples.sh            after `npm ci`; about 4 minutes on 2 cores
#
# What it leaves out, and why: test/unit/docs-links.test.ts and
# docs-words.test.ts (README and docs link to the examples on purpose, and
# the words check reads the examples' READMEs), and the emulator suites beyond the few
# below (`npm test` runs them all in the checkout, where they use the same
# fixture app). On a shared machine run it under the emulator lock, as any
# emulator run: `flock /tmp/heavy.lock tools/ci/without-examples.sh`.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
copy="$(mktemp -d "${TMPDIR:-/tmp}/inbox-without-examples-XXXXXX")"
trap 'rm -rf "$copy"' EXIT
step() { printf '\n== without examples: %s (%ss)\n' "$1" "$SECONDS"; }

step "copy of $root in $copy"
# The checkout's files as they are in the working tree (tracked and new ones, not the ignored: no dist/, no node_modules).
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$root" && xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh) |
  (cd "$root" && tar --null -T - -cf -) | tar -xf - -C "$copy"
rm -rf "$copy/examples"
# node_modules as hard links (the same file system), else a copy. Not a symlink: dependency-cruiser
# refuses modules that resolve outside the directory it cruises ("Unusual baseDir").
modules="$(readlink -f "$root/node_modules")"
cp -al "$modules" "$copy/node_modules" 2>/dev/null || { rm -rf "$copy/node_modules"; cp -a "$modules" "$copy/node_modules"; }
cd "$copy"
test ! -e examples
export INBOX_APP=test/fixtures/app

step 'build (npm run build, the fixture app bundled into dist/apps/)'
npm run build --silent

step 'typecheck'
npx tsc -p tsconfig.json --noEmit
npx tsc -p console-ui/tsconfig.json

step 'lint: eslint'
npx eslint .
step 'lint: the import rules (npm run lint:deps without examples/)'
npx depcruise functions/src console-ui tools test packages --config .dependency-cruiser.cjs

step 'unit project'
npx jest --selectProjects unit --testPathIgnorePatterns '/test/unit/docs-(links|words)\.test\.ts$'

step 'emulator suites'
# One suite per way the system meets its app: the engine and the process stack with its steps (happy-path),
# the receiver and the relay with its message types, served functions from dist/ (push-to-inbox), a step
# reading a claim check (claim-check-settle), the CLI and the console (cli, api), the local stack with the
# app's topology and peers (stack).
npx jest \
  test/engine/happy-path.test.ts \
  test/receiver/receiver.test.ts \
  test/relay/relay.test.ts \
  test/e2e/push-to-inbox.test.ts \
  test/e2e/claim-check-settle.test.ts \
  test/cli/cli.test.ts \
  test/console/api.test.ts \
  test/local/stack.test.ts

step 'passed'
