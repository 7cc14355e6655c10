#!/usr/bin/env bash
# Prepares what the tests need, installing only what is missing (run it as often as you like):
# Debian packages (as root only; otherwise it says what to install and goes on), the sushy-tools
# venv for the Redfish emulator, and a check of Go. One line per thing: present, prepared, missing.
# Exits non-zero when something is still missing: a gate must prove every test. With
# REKINDLE_ALLOW_SKIP=1 it says what is missing and exits 0; the tests that need it then skip,
# each saying why (test/support/prerequisites.ts). Never inferred from CI or anything else.
set -euo pipefail

cache="${REKINDLE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rekindle}"
venv="$cache/tools/sushy-venv"
sushy_version=2.2.0
missing=()

say() { echo "prepare: $*"; }

# name of a Debian package, and the test that tells whether what it provides is here
packages=(
  "fence-agents|[ -x /usr/sbin/fence_redfish ]"          # the fence-agent driver's real agents
  "docker.io|command -v dockerd && command -v docker"    # Docker Engine for the docker/kind tests
  "busybox-static|[ -x /bin/busybox ]"                   # stand-in kind node images, nothing pulled
  "openssl|command -v openssl"                           # test certificates
  "python3-venv|python3 -c 'import venv, ensurepip'"     # the sushy-tools venv
  "default-jre-headless|command -v java"                 # Allure's HTML report
  "mmdebstrap|command -v mmdebstrap"                     # the kind node image build
  "runc|command -v runc"                                 # the private engine's runtime wrapper
)

need=()
for entry in "${packages[@]}"; do
  name="${entry%%|*}"
  if bash -c "${entry#*|}" >/dev/null 2>&1; then say "present   $name"; else need+=("$name"); fi
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${need[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    for name in "${need[@]}"; do say "prepared  $name"; done
  else
    why="not root"
    command -v apt-get >/dev/null 2>&1 || why="no apt-get"
    for name in "${need[@]}"; do say "missing   $name ($why)"; done
    say "  to install: sudo apt-get update && sudo apt-get install -y ${need[*]}"
    missing+=("${need[@]}")
  fi
fi

# The venv counts only if it works: a venv without sushy-tools' dependencies (bcrypt among them),
# or one left half-made by an interrupted install, is made again.
sushy_works() {
  "$venv/bin/python" -c 'import bcrypt, sushy_tools.emulator.main' >/dev/null 2>&1 &&
    "$venv/bin/sushy-emulator" --help >/dev/null 2>&1 &&
    [ "$("$venv/bin/pip" show sushy-tools 2>/dev/null | sed -n 's/^Version: //p')" = "$sushy_version" ]
}
if sushy_works; then
  say "present   sushy-tools $sushy_version ($venv)"
elif ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  say "missing   sushy-tools $sushy_version (needs python3-venv)"
  missing+=(sushy-tools)
else
  [ -e "$venv" ] && say "rebuilding $venv: it does not run sushy-emulator"
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check \
    "sushy-tools==$sushy_version" && sushy_works; then
    say "prepared  sushy-tools $sushy_version ($venv)"
  else
    say "missing   sushy-tools $sushy_version (the install above failed)"
    missing+=(sushy-tools)
  fi
fi

# Go builds the sim binaries and kind from Go modules; Debian's golang is older than 1.26.
go_version="$(go env GOVERSION 2>/dev/null || true)"
if [[ "$go_version" =~ ^go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 26 ]; then
  say "present   Go ${go_version#go}"
else
  say "missing   Go >= 1.26 (${go_version:-no go on PATH}): install Go >= 1.26 and put it on PATH"
  missing+=(go)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "${REKINDLE_ALLOW_SKIP:-}" = 1 ]; then
    say "REKINDLE_ALLOW_SKIP=1: the tests that need ${missing[*]} will skip, saying why"
  else
    say "error: missing ${missing[*]}; install it, or set REKINDLE_ALLOW_SKIP=1 to skip the tests that need it"
    exit 1
  fi
fi
exit 0
