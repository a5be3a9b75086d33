#!/usr/bin/env bash
# What the project needs from the machine besides Node and npm, from Debian:
#   scripts/machine-packages.sh build   python3, make, g++ (the first install compiles better-sqlite3)
#   scripts/machine-packages.sh test    chromium (the client SDK's browser tests), postgresql (15+)
#                                       and redis-server (7+), of which the tests start throwaway
#                                       servers of their own (test-support/services)
# Installs what is missing (as root, or with sudo that asks no password); else stops at once with
# the one command to run. Honours CHROMIUM_PATH, WMP_PG_BINDIR and WMP_REDIS_SERVER as the tests do.
set -euo pipefail
purpose=${1:-test}
packages=()
case "$purpose" in
  build)
    command -v python3 >/dev/null 2>&1 || packages+=(python3)
    command -v make >/dev/null 2>&1 || packages+=(make)
    command -v g++ >/dev/null 2>&1 || packages+=(g++)
    ;;
  test)
    [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || packages+=(chromium)
    if [ -z "${WMP_PG_BINDIR:-}" ]; then
      compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || packages+=(postgresql)
    fi
    command -v "${WMP_REDIS_SERVER:-redis-server}" >/dev/null 2>&1 || packages+=(redis-server)
    ;;
  *) echo "usage: scripts/machine-packages.sh build|test" >&2; exit 2 ;;
esac
[ ${#packages[@]} -eq 0 ] && exit 0

what=$([ "$purpose" = build ] && echo "the install" || echo "npm test")
command="apt-get install -y ${packages[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$what: needs ${packages[*]}: install them with the system's package manager, then run it again" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    sudo=(sudo -n)
  else
    echo "$what: needs the Debian packages ${packages[*]}; run: sudo $command" >&2
    exit 1
  fi
fi
echo "$what: installing ${packages[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1 ||
  { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null; }
