#!/usr/bin/env bash
# Render examples/course.toml on a Dask cluster started here: one `dask scheduler` and two
# `dask worker`s on this machine (loopback, ports the scheduler picks), then everything this
# script started is stopped, whatever happens. Exits non-zero on any failure.
#   bash scripts/cluster-demo.sh [render.py options, e.g. --chapters 1]
# On real machines: run the scheduler on one, `bash scripts/setup.sh` and
# `dask worker tcp://SCHEDULER:8786 --nthreads 1` on each worker, and
# `render.py --batch course.toml --scheduler tcp://SCHEDULER:8786` anywhere (README).
# CLUSTER_DEMO_OUT=DIR writes the course's media/ folder under DIR instead of here.
set -euo pipefail
project="$(cd "$(dirname "$0")/.." && pwd)"
bin="$project/.venv/bin"
py="${PYTHON:-$bin/python}"
work="$(mktemp -d)"
pids=()

stop() {
  status=$?
  trap - EXIT INT TERM
  # One at a time, in order: the render first (it cancels its chapters), then the
  # workers (each closes its own worker process), the scheduler last; 20 s each at most.
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
  exit "$status"
}
trap stop EXIT
trap 'exit 130' INT TERM

"$bin/dask" scheduler --host 127.0.0.1 --port 0 --no-dashboard \
  --scheduler-file "$work/scheduler.json" >"$work/scheduler.log" 2>&1 &
scheduler=$!
pids=("$scheduler")
for _ in $(seq 300); do [ -s "$work/scheduler.json" ] && break; sleep 0.1; done
if [ ! -s "$work/scheduler.json" ]; then
  echo "cluster-demo: the scheduler did not start:" >&2; cat "$work/scheduler.log" >&2; exit 1
fi
address="$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["address"])' \
  "$work/scheduler.json")"
for n in 1 2; do
  "$bin/dask" worker "$address" --host 127.0.0.1 --nthreads 1 --no-dashboard \
    --name "demo-$n" >"$work/worker-$n.log" 2>&1 &
  pids=("$!" "${pids[@]}")  # stopped before the scheduler
done
echo "cluster-demo: scheduler $address, 2 workers; pids $(IFS=,; echo "${pids[*]}")"

out="${CLUSTER_DEMO_OUT:-$project}"
mkdir -p "$out"
cd "$out"
# In the background, so that Ctrl-C or SIGTERM reaches the trap at once (bash runs traps
# only between foreground commands); the trap stops it first.
"$py" "$project/render.py" --batch "$project/examples/course.toml" \
  --scheduler "$address" "$@" &
render=$!
pids=("$render" "${pids[@]}")
if ! wait "$render"; then
  echo "cluster-demo: the batch failed; worker logs:" >&2
  tail -n 20 "$work"/worker-*.log >&2
  exit 1
fi
echo "cluster-demo: done, stopping the scheduler and workers"
