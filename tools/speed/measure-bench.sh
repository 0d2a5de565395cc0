#!/usr/bin/env bash
# measure-bench.sh: `dgr bench --in-process` on llama-1b Q4_0, 128-token prompts, 64 tokens out, concurrency 1, 4 and 8
# (issue 26's serving figures: output and total token throughput, TTFT p95), then decode at depth 4096 with an f16
# K/V cache against f32 in one JVM (CacheDepthBench: alternating rounds, so load falls on both alike).
# Usage: tools/speed/measure-bench.sh [MODEL.gguf]   env: THREADS (2), CACHE (f32: the bench's --cache-type-k/-v),
#   DEPTH (4096; 0 skips the depth A/B), DEPTH_TYPES (f32,f16), BENCH_OUT (a folder that keeps the bench's output)
# Prints one line per level and per cache type. Runs about 4-5 minutes on an idle 2-core machine; stops what it starts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
THREADS="${THREADS:-2}" CACHE="${CACHE:-f32}" DEPTH="${DEPTH:-4096}" DEPTH_TYPES="${DEPTH_TYPES:-f32,f16}"
OUT="${BENCH_OUT:-$(mktemp -d /tmp/measure-bench.XXXXXX)}"
mkdir -p "$OUT"
load() { cut -d' ' -f1-3 /proc/loadavg; }
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset llama-1b --quant Q4_0 -o "$MODEL" >/dev/null

echo "# model $MODEL, $THREADS threads, cache $CACHE, $(nproc) cpus, $(date -u +%FT%TZ), load $(load)"
"$ROOT/dgr" bench --in-process -m "$MODEL" -t "$THREADS" -ctk "$CACHE" -ctv "$CACHE" --concurrency 1,4,8 \
  --prompt-tokens 128 --max-tokens 64 --requests-per-level 16 --warmup 4 --duration 60s -o "$OUT" >"$OUT/bench.log" 2>&1 || true
jq -r '.runs[0].levels[] | select(.mode == "closed")
  | "dgr bench c=\(.concurrency): output \(.output_throughput * 100 | round / 100) tok/s, total \(.total_token_throughput * 100 | round / 100) tok/s, TTFT p95 \(.ttft_ms.p95 | round) ms, TPOT p50 \(.tpot_ms.p50 * 10 | round / 10) ms (\(.completed) requests)"' \
  "$OUT/bench-result.json" 2>/dev/null || { echo "bench failed:"; tail -5 "$OUT/bench.log"; }
echo "# bench done [load $(load)]"

if [ "$DEPTH" -gt 0 ]; then
  cd "$ROOT"
  JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -XX:ObjectAlignmentInBytes=32 \
    -cp "engine/target/classes:gguf/target/classes" dgr.engine.llama.CacheDepthBench "$MODEL" --depth "$DEPTH" \
    --types "$DEPTH_TYPES" --threads "$THREADS" --steps 16 --rounds 3 2>&1 | grep -v WARNING | sed 's/^/dgr /'
fi
[ -n "${BENCH_OUT:-}" ] || rm -rf "$OUT"  # BENCH_OUT=DIR keeps bench-result.json (its iteration samples)
echo "# done $(date -u +%FT%TZ) [load $(load)]"
