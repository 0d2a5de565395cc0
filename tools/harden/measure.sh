#!/usr/bin/env bash
# Issue 29's listener and memory figures on llama-tiny, in about 3 minutes (plus a first build):
#   RSS idle / peak during 64 concurrent streams / 45 s after; a flood of 3000 connections over a cap of
#   256 (time to refusal); 50 request lines trickled a byte per 0.5 s (time to cut; header timeout 10 s).
#   tools/harden/measure.sh [PORT]        (stops the node it started on exit)
# DGR_JAVA_OPTS is passed to the node's JVM (e.g. to compare GC flags); ulimit -n must allow ~3500 sockets.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PORT="${1:-18529}"
MODEL="$ROOT/node/src/test/resources/llama-tiny-Q4_0.gguf"
LOG="$(mktemp -t dgr-harden-XXXXXX.log)"
ulimit -n 8192 2>/dev/null || true
"$ROOT/dgr" --help >/dev/null   # builds first when sources changed, outside the timed part
"$ROOT/dgr" serve -m "$MODEL" --host 127.0.0.1 --port "$PORT" --max-connections 256 -np 64 >"$LOG" 2>&1 &
NODE=$!
stop_node() { # SIGTERM (the node closes itself), then SIGKILL if it has not gone within 20 s
  kill "$NODE" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$NODE" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$NODE" 2>/dev/null && echo "node did not stop within 20 s of SIGTERM: killed"
  echo "node log: $LOG"
}
trap 'stop_node' EXIT
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); node pid $NODE; java opts: ${DGR_JAVA_OPTS:-none}"
python3 "$ROOT/tools/harden/probe.py" --port "$PORT" --pid "$NODE" --cap 256 --header-timeout 10s "${@:2}"
echo "node log: $(grep -c 'client fault' "$LOG") client-fault lines, $(grep -c '^\s*at ' "$LOG") stack-trace lines"
