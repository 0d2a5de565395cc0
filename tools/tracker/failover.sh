#!/usr/bin/env bash
# A node kill -9ed during a c=8 run through the tracker (docs/tracker.md, "Measured"): a tracker and two
# nodes (llama-110m Q4_0, java-q8/1, one thread each: the same recipe and engine, so streams can resume on
# either), then tools/tracker/failover.py: 8 streams of 96 tokens, the node killed once every client has 16
# tokens. About 1.5-2 minutes on an idle 2-core machine. Usage: tools/tracker/failover.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/dgr-tracker-failover}"
mkdir -p "$OUT"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
DGR=("$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC
     -XX:ObjectAlignmentInBytes=32 -cp "$ROOT/cli/target/dgr-cli.jar:$ROOT/cli/target/lib/*" dgr.cli.Main)
"$ROOT/dgr" --help >/dev/null  # builds the CLI first when a source is newer than the last build (else a no-op)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
healthy() { for _ in $(seq 600); do curl -sf "$1/health" >/dev/null && return 0; sleep 0.2; done; return 1; }
MODEL="$OUT/llama-110m-Q4_0.gguf"
[ -f "$MODEL" ] || "${DGR[@]}" synth --preset llama-110m --quant Q4_0 -o "$MODEL"
"${DGR[@]}" tracker --port 18200 --node-token fo-token --admin-token fo-admin >"$OUT/tracker.log" 2>&1 &
PIDS+=($!); healthy http://127.0.0.1:18200
for i in 1 2; do
  "${DGR[@]}" serve -m "$MODEL" -a llama-110m --port "1820$i" --threads 1 --engine q8 --max-batch-rows 8 \
      --tracker http://127.0.0.1:18200 --node-token fo-token >"$OUT/node$i.log" 2>&1 &
  PIDS+=($!); healthy "http://127.0.0.1:1820$i"
done
for _ in $(seq 100); do
  [ "$(curl -s -H 'Authorization: Bearer fo-admin' http://127.0.0.1:18200/v1/nodes | grep -o '"healthy":true' | wc -l)" = 2 ] && break
  sleep 0.2
done
python3 "$ROOT/tools/tracker/failover.py" --tracker http://127.0.0.1:18200 --model llama-110m --clients 8 \
    --kill-pid "${PIDS[1]}" --kill-after-tokens "${KILL_AFTER_TOKENS:-16}" | tee "$OUT/failover.json"
{ grep -c "resuming after" "$OUT/tracker.log" || true; } | sed 's/^/streams resumed (tracker log): /'
curl -s http://127.0.0.1:18200/metrics >"$OUT/tracker-metrics.txt"
grep -E "dgr_tracker_relay_latency_seconds_(bucket|count|sum)|dgr_tracker_failovers_total|dgr_tracker_recomputed" "$OUT/tracker-metrics.txt"
grep -E "resum(ed|ing)" "$OUT/tracker.log" | tail -12
python3 - "$OUT/tracker-metrics.txt" <<'PY'
import re, sys
b = {float(m.group(1)) if m.group(1) != "+Inf" else float("inf"): float(m.group(2)) for m in
     re.finditer(r'dgr_tracker_relay_latency_seconds_bucket\{le="([^"]+)"\} (\S+)', open(sys.argv[1]).read())}
n = b[float("inf")]
p50 = min(le for le, c in b.items() if c >= n / 2)
print(f"relay latency per chunk (tracker's own time): p50 <= {p50 * 1000:g} ms over {n:.0f} chunks (goal <= 1 ms)")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
