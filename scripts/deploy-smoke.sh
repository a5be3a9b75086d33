#!/usr/bin/env bash
# Docker-less check of apps/relay/Dockerfile's build stage (no Docker engine runs here): the same
# pnpm commands on a copy of the working tree, then the pruned `pnpm deploy` output is started
# alone, with the repository copy deleted, and must answer /health, the well-known document and
# the box limits, and stop with exit code 0 on SIGTERM.
#
#   scripts/deploy-smoke.sh            # pnpm store: the user's (like the Dockerfile's cache mount)
#   WMP_SMOKE_STORE=fresh scripts/deploy-smoke.sh   # an empty store in the temp dir (slow: downloads)
#   WMP_SMOKE_KEEP=1 ...               # keep the temp dir for inspection
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command -v pnpm >/dev/null 2>&1 || export PATH="$root/.tools/bin:$PATH"
# Native addons (better-sqlite3) build against the running Node's headers (as ./dev does).
. scripts/node-headers.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/wmp-deploy-smoke.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  if [ "${WMP_SMOKE_KEEP:-}" = "1" ]; then echo "deploy-smoke: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
step() { echo "deploy-smoke: $*" >&2; }

store=()
if [ "${WMP_SMOKE_STORE:-}" = "fresh" ]; then store=(--store-dir "$work/store"); fi

# The build context: what `git add -A` would commit (tracked and new files, minus .gitignore'd
# ones), which is what .dockerignore leaves of a checkout.
mkdir -p "$work/repo" "$work/fetch"
git ls-files -z --cached --others --exclude-standard \
  | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null \
  | tar -C "$work/repo" -xf -

step "pnpm fetch (lockfile only)"
cp pnpm-lock.yaml pnpm-workspace.yaml "$work/fetch/"
(cd "$work/fetch" && CI=true pnpm fetch "${store[@]}" --reporter=silent)

step "pnpm install --offline, build, deploy --prod"
(
  cd "$work/repo"
  CI=true pnpm install --frozen-lockfile --offline "${store[@]}" --reporter=silent
  pnpm --filter "@wmp/relay..." run build >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
  pnpm --filter @wmp/relay deploy --prod "${store[@]}" "$work/out" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log" >&2; exit 1; }
)
rm -rf "$work/repo" "$work/fetch"

step "starting node dist/main.js from the deploy output ($(du -sh "$work/out" | cut -f1))"
mkdir -p "$work/data"
(cd "$work/out" && NODE_ENV=production exec node dist/main.js --data-dir "$work/data" --port 0 --host 127.0.0.1) \
  >"$work/stdout" 2>"$work/stderr" &
pid=$!
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^wmp-relay listening on //p' "$work/stdout")
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$url" ]; then
  step "the relay did not start"
  cat "$work/stderr" >&2
  exit 1
fi
health=$(curl -fsS "$url/health")
curl -fsS "$url/.well-known/wmp-configuration" | grep -q '"relay_id"'
curl -fsS "$url/ohan/v1/limits" | grep -q '"ohan.relay.1"'
[ -f "$work/data/relay-identity.key" ] && [ -f "$work/data/relay.db" ]

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=
if [ "$code" != 0 ]; then
  step "SIGTERM: exit code $code"
  cat "$work/stderr" >&2
  exit 1
fi
echo "deploy-smoke: ok: pnpm deploy output answered /health ($health) at $url and stopped cleanly"
