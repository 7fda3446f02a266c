#!/bin/sh
# `npm run test:busy [-- RUNS]`: the whole test suite (`npm test`) RUNS times in a row (default 1)
# while as many processes as the machine has cores spin beside it, so that every core is taken
# by other work, as on a shared build machine. The suite must hold there: its waits are for
# conditions, with deadlines, never races against a fixed timer. Stops at the first red run.
set -u
runs=${1:-1}
cores=$(node -p 'require("node:os").availableParallelism()')
spinners=""
stop_spinners() { [ -n "$spinners" ] && kill $spinners 2>/dev/null; }
trap stop_spinners EXIT INT TERM
i=0
while [ "$i" -lt "$cores" ]; do
  node -e 'for (;;) {}' &
  spinners="$spinners $!"
  i=$((i + 1))
done
echo "test:busy: $cores spinning processes (pids$spinners), $runs run(s) of npm test" >&2
run=1
while [ "$run" -le "$runs" ]; do
  started=$(date +%s)
  if ! npm test; then
    echo "test:busy: run $run of $runs failed after $(($(date +%s) - started)) s" >&2
    exit 1
  fi
  echo "test:busy: run $run of $runs passed in $(($(date +%s) - started)) s" >&2
  run=$((run + 1))
done
