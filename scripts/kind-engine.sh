#!/usr/bin/env bash
# rekindle's private container engine, for sandboxes where privileged containers fail.
#
# Some sandboxes (this project's CI among them) withhold CAP_SYS_RESOURCE from the bounding set:
# `docker run --privileged` then fails in runc with "unable to apply caps: operation not
# permitted", and kind nodes (privileged containers) cannot start. This script never touches the
# user's own engine. It runs a dockerd of rekindle's own, with its own socket, data root, exec
# root and config, whose OCI runtime is a wrapper that drops CAP_SYS_RESOURCE from a container's
# capability lists before calling runc.
#
#   scripts/kind-engine.sh check     exit 0 if privileged containers work on the engine DOCKER_HOST
#                                    (or the default socket) names; 3 if they fail; 4 if none answers
#   scripts/kind-engine.sh start     start the private engine (idempotent); prints its DOCKER_HOST
#   scripts/kind-engine.sh stop      stop it (containers it runs are stopped with it)
#   scripts/kind-engine.sh status    running or not, and its DOCKER_HOST
#   scripts/kind-engine.sh host      print its DOCKER_HOST (whether running or not)
#   scripts/kind-engine.sh ensure    print the DOCKER_HOST to use for kind: empty when the current
#                                    engine runs privileged containers, else the private engine's
#                                    (started if needed)
#
# Environment: REKINDLE_ENGINE_DIR (runtime files; default /run/rekindle-engine),
# REKINDLE_CACHE_DIR (the data root lives in <cache>/engine/docker so images survive restarts;
# default ~/.cache/rekindle). Needs root, dockerd, runc and python3.
set -euo pipefail

run_dir="${REKINDLE_ENGINE_DIR:-/run/rekindle-engine}"
cache="${REKINDLE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rekindle}"
data_root="$cache/engine/docker"
socket="$run_dir/docker.sock"
pidfile="$run_dir/dockerd.pid"
log="$run_dir/dockerd.log"
wrapper="$run_dir/rekindle-runc"
probe_image="rekindle/engine-probe:2"

say() { echo "kind-engine: $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

host() { echo "unix://$socket"; }

running() {
  [ -S "$socket" ] && [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null &&
    DOCKER_HOST="$(host)" docker version >/dev/null 2>&1
}

# A tiny image to probe privileged runs with (nothing is pulled): the host's static busybox, or
# failing that its `true` with the libraries it links.
ensure_probe_image() {
  docker image inspect "$probe_image" >/dev/null 2>&1 && return 0
  local dir
  dir="$(mktemp -d)"
  if [ -x /bin/busybox ]; then
    mkdir -p "$dir/bin" && cp /bin/busybox "$dir/bin/busybox" && ln -s busybox "$dir/bin/true"
  else
    local f
    for f in "$(command -v true)" $(ldd "$(command -v true)" 2>/dev/null | grep -o '/[^ ]*'); do
      mkdir -p "$dir$(dirname "$f")" && cp -L "$f" "$dir$f"
    done
    mkdir -p "$dir/bin" && [ -e "$dir/bin/true" ] || ln -s "$(command -v true)" "$dir/bin/true"
  fi
  tar -C "$dir" -c . | docker import - "$probe_image" >/dev/null
  rm -rf "$dir"
}

# 0: privileged containers run; 3: they fail (the capability error); 4: no engine answers.
check() {
  docker version >/dev/null 2>&1 || return 4
  ensure_probe_image || return 4
  local out
  if out="$(docker run --rm --privileged "$probe_image" /bin/true 2>&1)"; then
    return 0
  fi
  say "privileged container failed on ${DOCKER_HOST:-the default engine}: $(echo "$out" | tail -1)"
  return 3
}

write_wrapper() {
  mkdir -p "$run_dir"
  local runc
  runc="$(command -v runc || true)"
  [ -n "$runc" ] || die "runc not found (Debian: apt-get install runc)"
  command -v python3 >/dev/null 2>&1 || die "python3 not found (it edits OCI bundles for the runc wrapper)"
  # The wrapper finds the JSON runc will read (the bundle's config.json for create/run, the
  # --process file for exec) and removes CAP_SYS_RESOURCE from every capability list in it.
  # The program is a file of its own: runc hands its stdin to the container (docker exec -i),
  # so the wrapper must not read its script from stdin.
  cat >"$wrapper.py" <<EOF
# Written by rekindle's kind-engine.sh: runc, minus CAP_SYS_RESOURCE (withheld by this sandbox).
import json, os, sys
args = sys.argv[1:]
def strip(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError:
        return
    caps = (doc.get("process", doc) or {}).get("capabilities") or {}
    for key, value in list(caps.items()):
        if isinstance(value, list):
            caps[key] = [c for c in value if c != "CAP_SYS_RESOURCE"]
    with open(path, "w") as f:
        json.dump(doc, f)
# Global options (--root DIR, --log FILE, ...) come first: the command is the first known word.
command = next((a for a in args if a in ("create", "run", "exec")), "")
if command in ("create", "run"):
    bundle = "."
    for i, a in enumerate(args):
        if a in ("--bundle", "-b") and i + 1 < len(args):
            bundle = args[i + 1]
        elif a.startswith("--bundle="):
            bundle = a.split("=", 1)[1]
    strip(os.path.join(bundle, "config.json"))
elif command == "exec":
    for i, a in enumerate(args):
        if a in ("--process", "-p") and i + 1 < len(args):
            strip(args[i + 1])
        elif a.startswith("--process="):
            strip(a.split("=", 1)[1])
os.execv("$runc", ["runc"] + args)
EOF
  printf '#!/bin/sh\nexec python3 %s "$@"\n' "$wrapper.py" >"$wrapper"
  chmod 755 "$wrapper"
}

start() {
  if running; then
    host
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || die "dockerd not found (Debian: apt-get install docker.io)"
  [ "$(id -u)" = 0 ] || die "the private engine needs root (it runs dockerd)"
  write_wrapper
  mkdir -p "$data_root"
  # Another daemon owns docker0: give this one no default bridge (kind uses its own network).
  local bridge='"bridge": "none",'
  ip link show docker0 >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1 || bridge=""
  cat >"$run_dir/daemon.json" <<EOF
{
  $bridge
  "runtimes": { "rekindle-runc": { "path": "$wrapper" } },
  "default-runtime": "rekindle-runc"
}
EOF
  say "starting a private dockerd (socket $socket, data root $data_root, log $log)"
  dockerd --host "$(host)" --data-root "$data_root" --exec-root "$run_dir/exec" \
    --pidfile "$pidfile" --config-file "$run_dir/daemon.json" >"$log" 2>&1 &
  local i
  for i in $(seq 1 60); do
    running && break
    sleep 0.5
  done
  running || {
    tail -20 "$log" >&2 || true
    die "the private dockerd did not answer within 30 s (log above, from $log)"
  }
  if ! DOCKER_HOST="$(host)" check; then
    stop
    die "privileged containers fail even on the private engine; see $log"
  fi
  host
}

stop() {
  [ -f "$pidfile" ] || return 0
  local pid
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    say "stopping the private dockerd (pid $pid)"
    kill "$pid"
    local i
    for i in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
check) check ;;
start) start ;;
stop) stop ;;
status) if running; then echo "running $(host)"; else echo "stopped"; fi ;;
host) host ;;
ensure)
  rc=0
  check || rc=$?
  case "$rc" in
  0) echo "" ;;
  3 | 4) start ;;
  esac
  ;;
*)
  echo "usage: $0 check|start|stop|status|host|ensure" >&2
  exit 2
  ;;
esac
