#!/usr/bin/env bash
# `npm test` (through ./dev, which installs): what the tests need from the machine
# (scripts/machine-packages.sh test), then typecheck, lint and every test. Run without pnpm in between, so
# the last line is the closing line of scripts/vitest-summary.mjs:
#   vitest: N passed, N failed, N skipped, N failed suites, N errors[ - FAILED ...]
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/machine-packages.sh test || exit 1
node_modules/.bin/tsc -p tsconfig.json || exit 1
node_modules/.bin/biome check --error-on-warnings . || exit 1
mkdir -p .ci/out
rm -f .ci/out/vitest.json .ci/out/vitest.run.json
node_modules/.bin/vitest run --reporter=default --reporter=json --reporter=./scripts/vitest-run-reporter.mjs \
  --outputFile.json=.ci/out/vitest.json
status=$?
node scripts/vitest-summary.mjs "$status"
exit "$status"
