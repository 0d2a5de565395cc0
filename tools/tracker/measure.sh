#!/usr/bin/env bash
# Measures the tracker on 127.0.0.1 (docs/tracker.md, "Measured"): two nodes of different capacity, each
# with its own saturation.json from `dgr bench --url`, then `dgr bench --url` through the tracker with
# --routing capacity and with round-robin. Usage: tools/tracker/measure.sh [OUT_DIR]
# Nodes: llama-110m Q4_0, one thread each; A runs java-q8/1, B java-simd/1 (B is slower per token, so its
# saturation point differs). Every process started here is stopped by its pid on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/dgr-tracker-measure}"
mkdir -p "$OUT"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
DGR=("$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC
     -XX:ObjectAlignmentInBytes=32 -cp "$ROOT/cli/target/dgr-cli.jar:$ROOT/cli/target/lib/*" dgr.cli.Main)
LEVELS="${LEVELS:-1,2,4,8,16}"
BENCH=(--concurrency "$LEVELS" --duration "${LEVEL_SECONDS:-15}s" --max-tokens 24 --prompt-tokens 16:32 --warmup 2 --seed 7)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
healthy() { for _ in $(seq 600); do curl -sf "$1/health" >/dev/null && return 0; sleep 0.2; done; echo "no health at $1" >&2; return 1; }

MODEL="$OUT/llama-110m-Q4_0.gguf"
[ -f "$MODEL" ] || "${DGR[@]}" synth --preset llama-110m --quant Q4_0 -o "$MODEL"

node() { # name port engine [extra...]
  local name=$1 port=$2 engine=$3; shift 3
  "${DGR[@]}" serve -m "$MODEL" -a llama-110m --port "$port" --threads 1 --engine "$engine" "$@" >"$OUT/$name.log" 2>&1 &
  PIDS+=($!); healthy "http://127.0.0.1:$port"
}

# 1. Each node's own saturation point, measured directly.
if [ ! -f "$OUT/sat-a/saturation.json" ]; then
  node a 18101 q8; "${DGR[@]}" bench --url http://127.0.0.1:18101/v1 -m "$MODEL" "${BENCH[@]}" -o "$OUT/sat-a" >"$OUT/sat-a.log" 2>&1 || true  # non-zero when a fairness check fails
  cleanup; PIDS=()
fi
if [ ! -f "$OUT/sat-b/saturation.json" ]; then
  node b 18102 simd; "${DGR[@]}" bench --url http://127.0.0.1:18102/v1 -m "$MODEL" "${BENCH[@]}" -o "$OUT/sat-b" >"$OUT/sat-b.log" 2>&1 || true
  cleanup; PIDS=()
fi

# 2. The same two nodes behind a tracker, once per routing policy.
for routing in ${ROUTINGS:-capacity round-robin}; do
  "${DGR[@]}" tracker --port 18100 --node-token measure-token --admin-token measure-admin --routing "$routing" --queue-wait "${QUEUE_WAIT:-10s}" \
      >"$OUT/tracker-$routing.log" 2>&1 &
  PIDS+=($!); healthy http://127.0.0.1:18100
  node a 18101 q8 --saturation "$OUT/sat-a/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
  node b 18102 simd --saturation "$OUT/sat-b/saturation.json" --tracker http://127.0.0.1:18100 --node-token measure-token
  for _ in $(seq 100); do
    [ "$(curl -s -H 'Authorization: Bearer measure-admin' http://127.0.0.1:18100/v1/nodes | grep -o '"healthy":true' | wc -l)" = 2 ] && break
    sleep 0.2
  done
  curl -s -H 'Authorization: Bearer measure-admin' http://127.0.0.1:18100/v1/nodes >"$OUT/nodes-$routing.json"
  "${DGR[@]}" bench --url http://127.0.0.1:18100/v1 -m "$MODEL" "${BENCH[@]}" -o "$OUT/$routing" >"$OUT/bench-$routing.log" 2>&1 || true
  cleanup; PIDS=()
done
echo "results under $OUT"
