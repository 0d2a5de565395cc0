#!/usr/bin/env bash
# Capacity routing against round-robin on 127.0.0.1 (docs/tracker.md, "Measured"): two nodes of different
# capacity, each with its own saturation.json from `dgr bench --url`, then `dgr bench --url` through the
# tracker at each concurrency level with --routing capacity and with round-robin, REQUESTS requests a level.
# The two policies alternate level by level (capacity first at odd levels, round-robin first at even ones),
# the tracker restarted for each, so a machine whose load drifts does not favour one of them.
# Prints per level and policy output tokens/s, TTFT p50/p99 and how many requests each node served, and
# whether capacity's p99 TTFT is >= 15% below round-robin's at equal or better throughput.
# About 4-5 minutes on an idle 2-core machine.
# Usage: tools/tracker/measure.sh [OUT_DIR]
#   env: LEVELS (1,2,4,8,16), REQUESTS (64 a level), REPEATS (1: each level and policy measured that many
#        times, every run printed, the goal judged on the requests of all runs together), MAX_TOKENS (16),
#        SAT_SECONDS (6), QUEUE_WAIT (30s)
# Nodes: llama-110m Q4_0, one thread each; A runs java-q8, B java-simd (B is several times slower per token,
# so their saturation points and speeds differ). Every process started here is stopped by its pid.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/dgr-tracker-measure}"
rm -rf "$OUT"; mkdir -p "$OUT"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
DGR=("$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC
     -XX:ObjectAlignmentInBytes=32 -cp "$ROOT/cli/target/dgr-cli.jar:$ROOT/cli/target/lib/*" dgr.cli.Main)
"$ROOT/dgr" --help >/dev/null  # builds the CLI first when a source is newer than the last build (else a no-op)
LEVELS="${LEVELS:-1,2,4,8,16}"
REQUESTS="${REQUESTS:-64}"
REPEATS="${REPEATS:-1}"
COMMON=(--max-tokens "${MAX_TOKENS:-16}" --prompt-tokens 16:32 --seed 7)
PIDS=()
TRACKER_PID=
stop() { for p in "$@"; do kill "$p" 2>/dev/null || true; done; for p in "$@"; do wait "$p" 2>/dev/null || true; done; }
cleanup() { stop "${PIDS[@]}"; }
trap cleanup EXIT
healthy() { for _ in $(seq 900); do curl -sf "$1/health" >/dev/null && return 0; sleep 0.2; done; echo "no health at $1" >&2; return 1; }
joined() { # both nodes healthy in the tracker's routing
  for _ in $(seq 150); do
    [ "$(curl -s -H 'Authorization: Bearer measure-admin' http://127.0.0.1:18100/v1/nodes | grep -o '"healthy":true' | wc -l)" = 2 ] && return 0
    sleep 0.2
  done; echo "nodes did not join" >&2; return 1
}
MODEL="$OUT/llama-110m-Q4_0.gguf"
"${DGR[@]}" synth --preset llama-110m --quant Q4_0 -o "$MODEL" >/dev/null
node() { # name port engine [extra...]: started in the background, pid in NODE_PID
  local name=$1 port=$2 engine=$3; shift 3
  "${DGR[@]}" serve -m "$MODEL" -a llama-110m --port "$port" --threads 1 --engine "$engine" "$@" >>"$OUT/$name.log" 2>&1 &
  NODE_PID=$!; PIDS+=("$NODE_PID")
}
tracker() { # routing: a fresh tracker (the previous one stopped), both nodes joined
  [ -z "$TRACKER_PID" ] || stop "$TRACKER_PID"
  "${DGR[@]}" tracker --port 18100 --node-token measure-token --admin-token measure-admin --routing "$1" \
      --queue-wait "${QUEUE_WAIT:-30s}" >>"$OUT/tracker-$1.log" 2>&1 &
  TRACKER_PID=$!; PIDS+=("$TRACKER_PID"); healthy http://127.0.0.1:18100; joined
}
echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): measuring each node's saturation point" >&2

# 1. Each node's own saturation point, measured directly, one node at a time.
node a 18101 q8; A=$NODE_PID; node b 18102 simd; B=$NODE_PID
healthy http://127.0.0.1:18101; healthy http://127.0.0.1:18102
for n in a:18101 b:18102; do
  "${DGR[@]}" bench --url "http://127.0.0.1:${n#*:}/v1" -m "$MODEL" --concurrency 1,2,4,8 --duration "${SAT_SECONDS:-6}s" \
      --warmup 2 "${COMMON[@]}" -o "$OUT/sat-${n%%:*}" >"$OUT/sat-${n%%:*}.log" 2>&1 || true  # non-zero when a fairness check fails
  [ -f "$OUT/sat-${n%%:*}/saturation.json" ] || { echo "no saturation.json for node ${n%%:*}: $OUT/sat-${n%%:*}.log" >&2; exit 1; }
done
stop "$A" "$B"

# 2. The same two nodes, now with their saturation.json, behind a tracker. Each (level, policy, repeat) is one
#    `dgr bench --url` run into its own directory, against a tracker started for it with that policy.
node a 18101 q8 --saturation "$OUT/sat-a/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
node b 18102 simd --saturation "$OUT/sat-b/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
healthy http://127.0.0.1:18101; healthy http://127.0.0.1:18102
i=0
for c in ${LEVELS//,/ }; do
  for rep in $(seq "$REPEATS"); do
    if (( i % 2 == 0 )); then order="capacity round-robin"; else order="round-robin capacity"; fi
    i=$((i + 1))
    for routing in $order; do
      tracker "$routing"
      echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): c=$c run $rep --routing $routing" >&2
      "${DGR[@]}" bench --url http://127.0.0.1:18100/v1 -m "$MODEL" --concurrency "$c" --requests-per-level "$REQUESTS" \
          --duration 120s --warmup 2 "${COMMON[@]}" -o "$OUT/$routing-c$c-r$rep" >"$OUT/bench-$routing-c$c-r$rep.log" 2>&1 || true
      curl -s http://127.0.0.1:18100/metrics | grep -E '^dgr_tracker_routing_decisions_total' >"$OUT/decisions-$routing-c$c-r$rep.txt" || true
    done
  done
done
python3 "$ROOT/tools/tracker/measure_report.py" "$OUT" "$LEVELS" "$REPEATS"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results under $OUT"
