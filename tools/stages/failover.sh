#!/usr/bin/env bash
# Issue 23 item 5's figure, alone (docs/stages.md, "Measuring"): a 3-stage route of llama-1b Q4_0 on
# 127.0.0.1 (-t 2 each, --route-depth 1), the middle hop with one alternate, 8 concurrent streams
# (greedy and seeded), the preferred middle stage killed at a random moment, KILLS times. Every kill
# gets a fresh head, a fresh preferred middle stage and a fresh alternate (the alternate has seen only
# the head's warm-up, as a standby would); the last stage stays.
# Prints, per kill, the longest gap any client saw, tokens recomputed, whether the texts equal the
# failure-free run bit for bit, and the head's failover phases (kill to detection, detection to the
# replay sent, to the first and to the last moved session's next token); then ONE summary line:
#   failover: N kills (SIGNAL), longest gap p50 X ms p90 Y ms p99 Z ms max W ms; failure-free run's longest gap B ms; ...
# Load is printed at the start and the end: gaps grow with it.
#   tools/stages/failover.sh [MODEL]     (default /tmp/models/llama-1b-Q4_0.gguf, made when missing)
#   KILLS=N (default 20)  SIGNAL=KILL|STOP (default KILL)  FLOOR=... (the heads' --stage-reply-floor;
#   default 2s for KILL, 250ms for STOP)
# About 10 s a kill on 2 quiet cores. Stops every process it starts, by handle.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DGR="$ROOT/dgr"
HERE="$ROOT/tools/stages"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
TOKEN="failover-$$"
KILLS="${KILLS:-20}"
SIGNAL="${SIGNAL:-KILL}"
# A kill -9 is told from the broken stream at once; the floor (2 s) only guards a loaded machine's
# stalls from being taken for a hung stage. With SIGNAL=STOP (a hung stage) its silence is what tells
# (no reply and no pulse), so the floor is the serving default (250 ms): detection = floor + 3 pulse
# periods of 100 ms after the stage was last heard from.
if [ "$SIGNAL" = STOP ]; then FLOOR="${FLOOR:-250ms}"; else FLOOR="${FLOOR:-2s}"; fi
WORK="$(mktemp -d /tmp/dgr-stages-failover.XXXXXX)"
PIDS=()

# Stops one process by handle, quietly (a SIGSTOPped one is continued first so it can die).
# Only pids still in PIDS are ever signalled: a reaped pid is dropped, so a reused one is never hit.
stop_pid() {
  local keep=() p
  for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  [ "${#keep[@]}" = "${#PIDS[@]}" ] && return 0
  PIDS=("${keep[@]}")
  kill -CONT "$1" 2>/dev/null || true
  kill "$1" 2>/dev/null || true
  # Disowned (see start): wait for it to go by its pid, then force it after 15 s.
  for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}
stop_all() {
  local p
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
}
trap stop_all EXIT

. "$HERE/prepare.sh"
# start NAME HTTP_PORT ARGS...: starts `dgr serve` in the background (PID_NAME, HTTP_NAME).
start() {
  local name=$1 http=$2; shift 2
  "$DGR" serve -m "$MODEL" -a m --port "$http" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_${name}=$! HTTP_${name}=$http"
  disown $!  # the kill -9 is the point: no "Killed" job report from the shell
}
# healthy NAME...: waits for each one's /health (a head's says 200 once its route answered).
healthy() {
  for name in "$@"; do
    local http_var="HTTP_$name" pid_var="PID_$name" ok=
    for _ in $(seq 900); do
      curl -sf "http://127.0.0.1:${!http_var}/health" >/dev/null 2>&1 && { ok=1; break; }
      kill -0 "${!pid_var}" 2>/dev/null || break
      sleep 0.2
    done
    [ -n "$ok" ] || { echo "$name did not become healthy; see $WORK/$name.log" >&2; exit 1; }
  done
}
# metric PORT NAME: the metric's value as an integer (0 when the head does not answer).
metric() {
  local v
  v=$(curl -sf "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {print $2}') || true
  v=${v%.*}
  echo "${v:-0}"
}

echo "failover: model $MODEL; $(nproc) cores; load average at start $(cut -d' ' -f1-3 /proc/loadavg); logs in $WORK"
PL=$(port)
start last "$(port)" --layers 11:16 --stage-port "$PL" --cluster-token "$TOKEN" -t 2
healthy last
: >"$WORK/kills.txt"
for k in $(seq 0 "$KILLS"); do
  P1=$(port); P2=$(port); H=$(port)
  start "mid$k" "$(port)" --layers 5:11 --stage-port "$P1" --cluster-token "$TOKEN" -t 2
  start "alt$k" "$(port)" --layers 5:11 --stage-port "$P2" --cluster-token "$TOKEN" -t 2
  # The head starts once both middle stages listen: a head is ready as soon as each hop has one stage
  # that answered its warm-up, and would put the sessions on the alternate if it answered first.
  healthy "mid$k" "alt$k"
  start "head$k" "$H" --layers 0:5 --route "127.0.0.1:$P1|127.0.0.1:$P2,127.0.0.1:$PL" --cluster-token "$TOKEN" \
      --stage-reply-floor "$FLOOR" --route-depth 1 -t 2
  healthy "head$k"
  mid_var="PID_mid$k"; alt_var="PID_alt$k"; head_var="PID_head$k"
  if [ "$k" = 0 ]; then  # the failure-free run, on the same kind of route
    python3 "$HERE/streams.py" "http://127.0.0.1:$H" 8 24 "$WORK/reference.json"
  else
    before=$(metric "$H" dgr_route_recomputed_tokens_total)
    after_chunks=$(( 3 + RANDOM % 16 ))
    python3 "$HERE/streams.py" "http://127.0.0.1:$H" 8 24 "$WORK/killed$k.json" --kill "${!mid_var}" --signal "$SIGNAL" --after "$after_chunks"
    after=$(metric "$H" dgr_route_recomputed_tokens_total)
    python3 "$HERE/failover_report.py" kill "$WORK/reference.json" "$WORK/killed$k.json" "$WORK/head$k.log" \
        "$k" "$after_chunks" "$(( after - before ))" >>"$WORK/kills.txt"
    tail -n 1 "$WORK/kills.txt"
  fi
  for v in "$head_var" "$mid_var" "$alt_var"; do stop_pid "${!v}"; done
done
stop_all
python3 "$HERE/failover_report.py" summary "$WORK/reference.json" "$WORK/kills.txt" "$SIGNAL" "$(cut -d' ' -f1-3 /proc/loadavg)"
