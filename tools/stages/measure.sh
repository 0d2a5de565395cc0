#!/usr/bin/env bash
# Issue 23's figures (docs/stages.md, "Measuring"): llama-1b Q4_0 from `dgr synth` on 127.0.0.1.
#   1. one node (-t 2) vs a 2-stage route (-t 2 per stage, --route-depth 1: the stages share the machine's
#      2 cores and compute in turn, a stage's pool parking while it waits for its neighbour, so both cores
#      go to whichever stage computes): generation tok/s at c=1 and c=8, the route's per-hop overhead p50
#      for one decode row (c=1: a row down and its token back, beyond the last stage's computing), the per-hop
#      latency of one decode row (hand-off upstream -> the stage's forward starting on it) and of its token back,
#      its bubble at c=8; then the route with micro-batches in flight (-t 1 per
#      stage, the default depth of one per stage) at c=8: tok/s and bubble;
#   2. tools/stages/failover.sh: a 3-stage route (-t 2 each, --route-depth 1) with an alternate middle
#      stage, its middle stage killed (kill -9) at a random moment of a c=8 run, KILLS (default 4) times:
#      the longest gap a client saw per kill, p50/p90/p99/max, tokens recomputed, texts equal yes/no.
# Heads run with --stage-reply-floor 2s, so a stall of a loaded machine is not taken for a hung stage
# (a kill -9 is detected from the broken stream, not from the deadline).
# About 4-5 minutes on 2 quiet cores; prints plain lines; stops every process it started.
#   tools/stages/measure.sh [MODEL]    (default /tmp/models/llama-1b-Q4_0.gguf, made when missing)
#   KILLS=N tools/stages/measure.sh    (number of kills in part 2; 0 skips it)
#   WARMUP=N (8), C1_REQUESTS=N (16): untimed requests before each level, timed requests at c=1
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DGR="$ROOT/dgr"
HERE="$ROOT/tools/stages"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
TOKEN="measure-$$"
KILLS="${KILLS:-4}"
WARMUP="${WARMUP:-8}"            # untimed requests before each level (24 tokens each)
C1_REQUESTS="${C1_REQUESTS:-16}" # timed requests at c=1
FLOOR=(--stage-reply-floor 2s)
WORK="$(mktemp -d /tmp/dgr-stages-measure.XXXXXX)"
PIDS=()

stop_all() {
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap stop_all EXIT

. "$HERE/prepare.sh"
# serve NAME HTTP_PORT ARGS...: starts `dgr serve` in the background and waits for /health.
serve() {
  local name=$1 http=$2; shift 2
  "$DGR" serve -m "$MODEL" -a m --port "$http" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_${name}=$!"
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$http/health" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "$name did not become healthy; see $WORK/$name.log" >&2
  exit 1
}
# bench URL C OUT: one closed-loop level; prints "tok/s bubble-json". WARMUP requests first (untimed): a
# process's first few hundred tokens still run code the JIT has not compiled, and a route has more of it (gRPC,
# Netty, protobuf) than one node, so a short cold level measures compiling, not serving. C1_REQUESTS at c=1.
bench() {
  local url=$1 c=$2 out=$3 reqs=$(( $2 == 1 ? C1_REQUESTS : 24 ))
  "$DGR" bench --url "$url" --concurrency "$c" --prompt-tokens 16 --max-tokens 24 --requests-per-level "$reqs" \
      --warmup "$WARMUP" --duration 60s -o "$out" >/dev/null 2>"$out.log" \
    || [ -f "$out/bench-result.json" ] || { echo "bench failed: $out.log" >&2; exit 1; }  # a failed fairness check still measured
  python3 - "$out/bench-result.json" <<'PY'
import json, sys
lv = json.load(open(sys.argv[1]))["runs"][0]["levels"][-1]
b = lv["batch"].get("pipeline_bubble")
print("%.2f" % lv["output_throughput"], "" if not b else ", ".join("%s %.2f" % kv for kv in b.items()))
PY
}
metric() { curl -sf "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {print $2}'; }

echo "model: $MODEL; machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. One node, then a 2-stage route.
H=$(port); serve one "$H" -t 2
one1=$(bench "http://127.0.0.1:$H" 1 "$WORK/one-c1" | cut -d' ' -f1)
one8=$(bench "http://127.0.0.1:$H" 8 "$WORK/one-c8" | cut -d' ' -f1)
stop_all

SP=$(port); SH=$(port); H=$(port)
serve last2 "$SH" --layers 8:16 --stage-port "$SP" --cluster-token "$TOKEN" -t 2
serve head2 "$H" --layers 0:8 --route "127.0.0.1:$SP" --cluster-token "$TOKEN" "${FLOOR[@]}" --route-depth 1 -t 2
route1=$(bench "http://127.0.0.1:$H" 1 "$WORK/route-c1" | cut -d' ' -f1)
hop=$(metric "$H" dgr_route_reply_overhead_p50_seconds)
rowhop=$(metric "$SH" dgr_stage_row_transit_p50_seconds)
tokenhop=$(metric "$H" dgr_route_token_transit_p50_seconds)
r8=$(bench "http://127.0.0.1:$H" 8 "$WORK/route-c8")
route8=${r8%% *}; bubble8=${r8#* }
stop_all

# The same route with micro-batches in flight (one per stage, the default) and -t 1 per stage.
SP=$(port); SH=$(port); H=$(port)
serve last2m "$SH" --layers 8:16 --stage-port "$SP" --cluster-token "$TOKEN" -t 1
serve head2m "$H" --layers 0:8 --route "127.0.0.1:$SP" --cluster-token "$TOKEN" "${FLOOR[@]}" -t 1
m8=$(bench "http://127.0.0.1:$H" 8 "$WORK/route-m-c8")
routem8=${m8%% *}; bubblem8=${m8#* }
stop_all

pct() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('%.0f%%' % (100 * a / b if b else 0))" "$1" "$2"; }
echo "2-stage route, -t 2 per stage, --route-depth 1 (stages compute in turn, each on both cores):"
echo "  generation tok/s c=1: one node $one1, 2-stage route $route1 ($(pct "$route1" "$one1") of one node)"
echo "  generation tok/s c=8: one node $one8, 2-stage route $route8 ($(pct "$route8" "$one8") of one node)"
echo "  per-hop overhead p50, one decode row at c=1 (reply time minus the last stage's computing, one hop down and back): $(python3 -c "print('%.3f ms' % (float('$hop') * 1e3))")"
ms() { python3 -c "import sys; v = float(sys.argv[1]); print('n/a' if v != v else '%.3f ms' % (v * 1e3))" "$1"; }
echo "  per-hop latency p50, one decode row at c=1 (the head handing it to its transport -> the stage's forward starting on it): $(ms "$rowhop"); its token back (the stage handing it over -> the head's scheduler taking it): $(ms "$tokenhop")"
echo "  bubble at c=8 (fraction of the level each stage waited): $bubble8"
echo "2-stage route, -t 1 per stage, micro-batches in flight (default depth: one per stage):"
echo "  generation tok/s c=8: $routem8 ($(pct "$routem8" "$one8") of one node); bubble at c=8: $bubblem8"

# 2. Three stages, the middle one with an alternate, kill -9 of the middle at a random moment at c=8:
# tools/stages/failover.sh (its own copy of the build and its own processes; prints its summary line).
if [ "$KILLS" -gt 0 ]; then
  echo "3-stage route (-t 2 each, --route-depth 1), kill -9 of the middle stage at a random moment at c=8:"
  KILLS="$KILLS" "$HERE/failover.sh" "$MODEL" | sed 's/^/  /'
fi
stop_all
echo "logs and bench reports: $WORK"
