#!/usr/bin/env bash
# Capacity routing against round-robin on 127.0.0.1 (docs/tracker.md, "Measured"): two nodes of different
# capacity, each with its own saturation.json from `dgr bench --url`, then `dgr bench --url` through the
# tracker with --routing capacity and with round-robin on the same two nodes. Prints per level output
# tokens/s and TTFT p50/p99 for both, and whether capacity's p99 TTFT is >= 15% below round-robin's at
# equal or better throughput. About 4 minutes on an idle 2-core machine.
# Usage: tools/tracker/measure.sh [OUT_DIR]   (env: LEVELS, LEVEL_SECONDS, SAT_SECONDS, QUEUE_WAIT)
# Nodes: llama-110m Q4_0, one thread each; A runs java-q8/1, B java-simd/1 (B is several times slower per
# token, so its saturation point and speeds differ). Every process started here is stopped by its pid.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/dgr-tracker-measure}"
rm -rf "$OUT"; mkdir -p "$OUT"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
DGR=("$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC
     -XX:ObjectAlignmentInBytes=32 -cp "$ROOT/cli/target/dgr-cli.jar:$ROOT/cli/target/lib/*" dgr.cli.Main)
[ -f "$ROOT/cli/target/dgr-cli.jar" ] || { echo "build first: ./dgr --help" >&2; exit 1; }
LEVELS="${LEVELS:-1,2,4,8,16}"
COMMON=(--max-tokens 24 --prompt-tokens 16:32 --warmup 2 --seed 7)
PIDS=()
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
tracker() { # routing
  "${DGR[@]}" tracker --port 18100 --node-token measure-token --admin-token measure-admin --routing "$1" \
      --queue-wait "${QUEUE_WAIT:-30s}" >"$OUT/tracker-$1.log" 2>&1 &
  TRACKER_PID=$!; PIDS+=("$TRACKER_PID"); healthy http://127.0.0.1:18100
}
echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): measuring each node's saturation point" >&2

# 1. Each node's own saturation point, measured directly, one node at a time.
node a 18101 q8; A=$NODE_PID; node b 18102 simd; B=$NODE_PID
healthy http://127.0.0.1:18101; healthy http://127.0.0.1:18102
for n in a:18101 b:18102; do
  "${DGR[@]}" bench --url "http://127.0.0.1:${n#*:}/v1" -m "$MODEL" --concurrency 1,2,4,8 --duration "${SAT_SECONDS:-8}s" \
      "${COMMON[@]}" -o "$OUT/sat-${n%%:*}" >"$OUT/sat-${n%%:*}.log" 2>&1 || true  # non-zero when a fairness check fails
  [ -f "$OUT/sat-${n%%:*}/saturation.json" ] || { echo "no saturation.json for node ${n%%:*}: $OUT/sat-${n%%:*}.log" >&2; exit 1; }
done
stop "$A" "$B"

# 2. The same two nodes, now with their saturation.json, behind a tracker: capacity, then round-robin
#    (the tracker is restarted with the other policy; the nodes re-join it within a heartbeat).
tracker capacity
node a 18101 q8 --saturation "$OUT/sat-a/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
node b 18102 simd --saturation "$OUT/sat-b/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
healthy http://127.0.0.1:18101; healthy http://127.0.0.1:18102
for routing in capacity round-robin; do
  [ "$routing" = capacity ] || { stop "$TRACKER_PID"; tracker "$routing"; }
  joined
  curl -s -H 'Authorization: Bearer measure-admin' http://127.0.0.1:18100/v1/nodes >"$OUT/nodes-$routing.json"
  echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): bench through the tracker, --routing $routing" >&2
  "${DGR[@]}" bench --url http://127.0.0.1:18100/v1 -m "$MODEL" --concurrency "$LEVELS" --duration "${LEVEL_SECONDS:-10}s" \
      "${COMMON[@]}" -o "$OUT/$routing" >"$OUT/bench-$routing.log" 2>&1 || true
  curl -s http://127.0.0.1:18100/metrics | grep -E '^dgr_tracker_routing_decisions_total' >"$OUT/decisions-$routing.txt" || true
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
def levels(name):
    d = json.load(open(f"{out}/{name}/bench-result.json"))
    return {l["concurrency"]: l for l in d["runs"][0]["levels"]}
for n in ("a", "b"):
    r = json.load(open(f"{out}/sat-{n}/saturation.json"))["recommendations"][0]
    print(f"node {n.upper()} ({r['engine']}): recommended_max_concurrency {r['recommended_max_concurrency']}, "
          f"{r['expected_output_throughput']:.1f} tok/s total, {r['expected_per_session_output_throughput']:.1f} tok/s per session")
cap, rr = levels("capacity"), levels("round-robin")
met = True
for c in sorted(cap):
    a, b = cap[c], rr.get(c)
    if b is None: continue
    pa, pb = a["ttft_ms"]["p99"], b["ttft_ms"]["p99"]
    better = (pb - pa) / pb * 100 if pb else float("nan")
    ok = better >= 15 and a["output_throughput"] >= b["output_throughput"]
    met &= ok
    print(f"c={c}: capacity {a['output_throughput']:.1f} tok/s, TTFT p50/p99 {a['ttft_ms']['p50']:.0f}/{pa:.0f} ms"
          f" ({a['completed']} done, {a['failed']} failed) | round-robin {b['output_throughput']:.1f} tok/s, TTFT p50/p99"
          f" {b['ttft_ms']['p50']:.0f}/{pb:.0f} ms ({b['completed']} done, {b['failed']} failed) | capacity p99 {better:+.0f}% better:"
          f" {'goal met' if ok else 'GOAL MISSED'}")
print("goal (capacity p99 TTFT >= 15% below round-robin at equal or better throughput, every level):",
      "met" if met else "MISSED")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results under $OUT"
