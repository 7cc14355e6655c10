#!/usr/bin/env bash
# `npm test` (the gate) and `npm run test:full` (`--full`): prepares what the tests need
# (scripts/prepare-test-env.sh), finds a container engine that runs privileged containers
# (scripts/kind-engine.sh ensure: the current one, or rekindle's private engine, started when needed
# and stopped at exit if this run started it), then runs typecheck, lint, unit and integration
# tests (the sim families at the fast profile, one real-kind smoke run); `--full` adds test/full
# (every kind family, the by-hand 6-minute scenarios, every family at the default profile).
# Every stage runs; the exit is non-zero if any failed. A missing prerequisite fails the run
# unless REKINDLE_ALLOW_SKIP=1 is set (then the tests that need it skip, saying why).
set -uo pipefail
cd "$(dirname "$0")/.."

stages=(typecheck lint test:unit test:integration)
case "${1:-}" in
  "") ;;
  --full) stages+=(test:slow) ;;
  *)
    echo "test: unknown argument '$1'; valid: --full (or nothing, for the gate)" >&2
    exit 2
    ;;
esac

failed=()
started=$SECONDS
# The stages still run when something is missing, to show what else passes.
bash scripts/prepare-test-env.sh || failed+=(prepare)

engine_before="$(bash scripts/kind-engine.sh status 2>/dev/null || echo stopped)"
if host="$(bash scripts/kind-engine.sh ensure)"; then
  if [ -n "$host" ]; then
    export DOCKER_HOST="$host"
    echo "test: container engine DOCKER_HOST=$host"
    if [ "$engine_before" = stopped ]; then
      # bash runs an EXIT trap on exit, not when a signal ends it: turn those into exits.
      trap 'bash scripts/kind-engine.sh stop' EXIT
      trap 'exit 130' INT
      trap 'exit 143' TERM
    fi
  else
    echo "test: container engine ${DOCKER_HOST:-at the default socket} runs privileged containers"
  fi
else
  # The tests that need an engine fail, naming it (or skip with REKINDLE_ALLOW_SKIP=1).
  echo "test: no container engine that runs privileged containers (kind-engine.sh ensure failed above)"
fi

minutes() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
# typecheck, lint and the unit tests only compute: they run side by side, each one's output printed
# whole, in order, once all three are done. The rest (real clusters) runs one stage at a time.
static_dir="$(mktemp -d)"
for stage in "${stages[@]:0:3}"; do
  (
    stage_started=$SECONDS
    npm run --silent "$stage" >"$static_dir/$stage.log" 2>&1
    echo "$? $((SECONDS - stage_started))" >"$static_dir/$stage.rc"
  ) &
done
wait
for stage in "${stages[@]:0:3}"; do
  echo "test: == npm run $stage"
  cat "$static_dir/$stage.log"
  read -r rc took <"$static_dir/$stage.rc"
  [ "$rc" = 0 ] || failed+=("$stage")
  echo "test: == $stage took $(minutes "$took") (beside the other two)"
done
rm -rf "$static_dir"
for stage in "${stages[@]:3}"; do
  echo "test: == npm run $stage"
  stage_started=$SECONDS
  npm run --silent "$stage" || failed+=("$stage")
  echo "test: == $stage took $(minutes $((SECONDS - stage_started)))"
done
echo "test: $(minutes $((SECONDS - started))) in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test: FAILED: ${failed[*]}"
  exit 1
fi
echo "test: all stages passed"
