#!/usr/bin/env bash
# `npm test`: prepares what the tests need (scripts/prepare-test-env.sh), finds a container engine
# that runs privileged containers (scripts/kind-engine.sh ensure: the current one, or rekindle's
# private engine, started when needed and stopped at exit if this run started it), then runs
# typecheck, lint, unit and integration tests. Every stage runs; the exit is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
# On CI it fails when something is missing; the stages still run, to show what else passes.
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
  # The tests that need an engine skip with the reason (fail on CI).
  echo "test: no container engine that runs privileged containers (kind-engine.sh ensure failed above)"
fi

for stage in typecheck lint test:unit test:integration; do
  echo "test: == npm run $stage"
  npm run --silent "$stage" || failed+=("$stage")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test: FAILED: ${failed[*]}"
  exit 1
fi
echo "test: all stages passed"
