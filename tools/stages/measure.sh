#!/usr/bin/env bash
# Issue 23's figures (docs/stages.md, "Measuring"): llama-1b Q4_0 from `dgr synth` on 127.0.0.1.
#   1. one node (-t 2) vs a 2-stage route (-t 2 per stage, --route-depth 1: the stages share the machine's
#      2 cores and compute in turn, a stage's pool parking while it waits for its neighbour, so both cores
#      go to whichever stage computes): generation tok/s at c=1 and c=8, the route's per-hop overhead p50
#      for one decode row (c=1), its bubble at c=8; then the route with micro-batches in flight (-t 1 per
#      stage, the default depth of one per stage) at c=8: tok/s and bubble;
#   2. a 3-stage route (-t 2 each, --route-depth 1: the replacement replays on both cores) with an
#      alternate middle stage: a failure-free c=8 run, then KILLS (default 4) runs, each on a fresh head
#      and a fresh preferred middle stage, whose middle stage is killed (kill -9) at a random moment: the longest gap a client saw per kill and their p99 (nearest
#      rank: with fewer than 100 kills, the largest), tokens recomputed, texts equal yes/no.
# Heads run with --stage-reply-floor 2s, so a stall of a loaded machine is not taken for a hung stage
# (a kill -9 is detected from the broken stream, not from the deadline).
# About 4-5 minutes on 2 quiet cores; prints plain lines; stops every process it started.
#   tools/stages/measure.sh [MODEL]    (default /tmp/models/llama-1b-Q4_0.gguf, made when missing)
#   KILLS=N tools/stages/measure.sh    (number of kills in part 2)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DGR="$ROOT/dgr"
HERE="$ROOT/tools/stages"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
TOKEN="measure-$$"
KILLS="${KILLS:-4}"
FLOOR=(--stage-reply-floor 2s)
WORK="$(mktemp -d /tmp/dgr-stages-measure.XXXXXX)"
PIDS=()

stop_all() {
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap stop_all EXIT

if [ ! -f "$MODEL" ]; then
  mkdir -p "$(dirname "$MODEL")"
  "$DGR" synth --preset llama-1b --quant Q4_0 -o "$MODEL" >/dev/null
fi
# Build once if the sources changed, then run a copy of the build (the distribution's layout), so an
# edit of the checkout during the run cannot rebuild the jars under the running processes.
"$DGR" --version >/dev/null
mkdir -p "$WORK/dist/bin" "$WORK/dist/lib"
cp "$ROOT/cli/src/dist/bin/dgr" "$WORK/dist/bin/dgr"
cp "$ROOT/cli/target/dgr-cli.jar" "$ROOT"/cli/target/lib/*.jar "$WORK/dist/lib/"
DGR="$WORK/dist/bin/dgr"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
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
# bench URL C OUT: one closed-loop level; prints "tok/s bubble-json".
bench() {
  local url=$1 c=$2 out=$3 reqs=$(( $2 == 1 ? 4 : 24 ))
  "$DGR" bench --url "$url" --concurrency "$c" --prompt-tokens 16 --max-tokens 24 --requests-per-level "$reqs" \
      --warmup 2 --duration 30s -o "$out" >/dev/null 2>"$out.log" \
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
echo "  bubble at c=8 (fraction of the level each stage waited): $bubble8"
echo "2-stage route, -t 1 per stage, micro-batches in flight (default depth: one per stage):"
echo "  generation tok/s c=8: $routem8 ($(pct "$routem8" "$one8") of one node); bubble at c=8: $bubblem8"

# 2. Three stages, the middle one with an alternate; kill -9 of the middle at a random moment at c=8, KILLS
# times. A head keeps a dead address dead, so every kill gets a fresh head and a fresh preferred middle
# stage (on a new port); the last stage and the alternate stay.
PL=$(port); P2=$(port)
serve last3 "$(port)" --layers 11:16 --stage-port "$PL" --cluster-token "$TOKEN" -t 2
serve alt "$(port)" --layers 5:11 --stage-port "$P2" --cluster-token "$TOKEN" -t 2
for k in $(seq 0 "$KILLS"); do
  P1=$(port); H=$(port)
  serve "mid$k" "$(port)" --layers 5:11 --stage-port "$P1" --cluster-token "$TOKEN" -t 2
  serve "head3_$k" "$H" --layers 0:5 --route "127.0.0.1:$P1|127.0.0.1:$P2,127.0.0.1:$PL" --cluster-token "$TOKEN" "${FLOOR[@]}" \
      --route-depth 1 -t 2
  if [ "$k" = 0 ]; then  # the failure-free run, on the same route
    python3 "$HERE/streams.py" "http://127.0.0.1:$H" 8 24 "$WORK/reference.json"
  else
    before=$(metric "$H" dgr_route_recomputed_tokens_total)
    after_chunks=$(( 3 + RANDOM % 16 ))
    pid_var="PID_mid$k"
    python3 "$HERE/streams.py" "http://127.0.0.1:$H" 8 24 "$WORK/killed$k.json" --kill "${!pid_var}" --signal KILL --after "$after_chunks"
    after=$(metric "$H" dgr_route_recomputed_tokens_total)
    python3 - "$WORK/reference.json" "$WORK/killed$k.json" "$after_chunks" "${before:-0}" "${after:-0}" "$k" >>"$WORK/kills.txt" <<'PY'
import json, sys
ref, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errors = [g["error"] for g in got + ref if g["error"]]
equal = all(r["text"] == g["text"] for r, g in zip(ref, got)) and not errors
print("  kill %s after %s chunks of session 0: longest gap %.0f ms, %d tokens recomputed, texts equal to the failure-free run: %s%s"
      % (sys.argv[6], sys.argv[3], max(g["gap_ms"] for g in got), float(sys.argv[5]) - float(sys.argv[4]),
         "yes" if equal else "no", "" if not errors else "; errors: " + "; ".join(errors)))
PY
  fi
  for v in "PID_head3_$k" "PID_mid$k"; do kill "${!v}" 2>/dev/null || true; wait "${!v}" 2>/dev/null || true; done
done
python3 - "$WORK/reference.json" "$WORK/kills.txt" "$KILLS" <<'PY'
import json, math, re, sys
ref = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
gaps = sorted(float(re.search(r"longest gap (\d+) ms", l).group(1)) for l in lines)
p99 = gaps[max(0, math.ceil(0.99 * len(gaps)) - 1)]
print("3-stage route (-t 2 each, --route-depth 1), kill -9 of the middle stage at a random moment at c=8, %s kills:" % sys.argv[3])
print("\n".join(lines))
print("  longest gap a client saw, p99 over the kills: %.0f ms (median %.0f ms; failure-free run: %.0f ms)"
      % (p99, gaps[len(gaps) // 2], max(r["gap_ms"] for r in ref)))
PY
stop_all
echo "logs and bench reports: $WORK"
