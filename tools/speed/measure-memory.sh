#!/usr/bin/env bash
# measure-memory.sh: resident memory of `dgr serve` per K/V cache type (issue 26 item 4), and how many sessions of
# 4,096 tokens the node's admission takes into its 1 GiB state budget. llama.cpp's figures on the same file:
# tools/speed/measure-memory-llamacpp.sh (split off so each script fits 5 minutes).
# Usage: tools/speed/measure-memory.sh [MODEL.gguf]   (default /tmp/models/llama-1b-Q4_0.gguf, synthesized if absent)
#   env: DGR_TYPES (default "f32 q8_0": each type takes about 2 minutes, mostly the prefill; DGR_TYPES="f16 bf16"
#   for the others), SESSIONS (8), TOKENS (2048), THREADS (2); DGR_JAVA_OPTS reaches the server's JVM (e.g. another
#   collector, to compare with the launcher's choice for serve).
# Per type: RSS (and anonymous RSS) after load ("idle"), then with SESSIONS sessions of TOKENS tokens each
# (prompts of TOKENS-16 token ids, 16 generated, measured once every prompt is in the cache), then the sessions of
# 4,096 positions a 1 GiB budget admits (32 submitted; the running count once admission settles). Stops every
# process it started. About 4-5 minutes on an idle 2-core machine with the default types (the prefill of
# 8 x 2,032 tokens per type dominates).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
DGR_TYPES="${DGR_TYPES:-f32 q8_0}"
SESSIONS="${SESSIONS:-8}" TOKENS="${TOKENS:-2048}" THREADS="${THREADS:-2}"
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset llama-1b --quant Q4_0 -o "$MODEL" >/dev/null
"$ROOT/dgr" --version >/dev/null   # builds what is missing before anything is timed

SERVER=""
stop() { if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; SERVER=""; fi; }
trap 'stop; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
mb() { awk -v k="$2" '$1 == k":" {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ids() { python3 -c "import sys; n=int(sys.argv[1]); s=int(sys.argv[2]); print(','.join(str(1000 + (s * 7919 + i * 104729) % 100000) for i in range(n)))" "$1" "$2"; }
cap() { curl -sf "http://127.0.0.1:$PORT/v1/capabilities" | jq -r "$1"; }
complete() { # prompt-length max-tokens seed: one streamed completion, output discarded
  curl -sfN "http://127.0.0.1:$PORT/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"$MODEL_ID\",\"prompt\":[$(ids "$1" "$3")],\"max_tokens\":$2,\"stream\":true,\"ignore_eos\":true}" >/dev/null 2>&1 || true
}

echo "# model $MODEL, $THREADS threads, $(nproc) cpus, $(date -u +%FT%TZ), load $(load)"
for t in $DGR_TYPES; do
  PORT="$(port)"
  "$ROOT/dgr" serve -m "$MODEL" --port "$PORT" -t "$THREADS" -c 4096 -n 4096 -np 32 -ctk "$t" -ctv "$t" >"/tmp/measure-memory-$t.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 0.2; done
  MODEL_ID="$(curl -sf "http://127.0.0.1:$PORT/v1/models" | jq -r '.data[0].id')"
  per_token="$(cap '.models[0].state_layout.bytes_per_token')"
  echo "dgr $t idle: RSS $(mb "$SERVER" VmRSS) MB (anonymous $(mb "$SERVER" RssAnon) MB, file $(mb "$SERVER" RssFile) MB); state $per_token bytes/token [load $(load)]"
  start=$(date +%s)
  for s in $(seq "$SESSIONS"); do complete $((TOKENS - 16)) 16 "$s" & done
  want=$(( SESSIONS * (TOKENS - 16) * per_token )) peak=0
  used=0
  for _ in $(seq 1200); do   # at most 10 minutes
    used="$(cap '.memory.state_bytes_used')"; r="$(mb "$SERVER" VmRSS)"; [ "$r" -gt "$peak" ] && peak=$r
    [ "$used" -ge "$want" ] && break
    sleep 0.5
  done
  echo "dgr $t with $SESSIONS x $TOKENS tokens: RSS $(mb "$SERVER" VmRSS) MB (anonymous $(mb "$SERVER" RssAnon) MB; peak while filling $peak MB); state in use $((used >> 20)) MiB; $(( $(date +%s) - start )) s to fill [load $(load)]"
  wait $(jobs -p | grep -v "^$SERVER\$") 2>/dev/null || true
  # Admission: sessions of 4,096 positions (8-token prompts, 4,089 new tokens) against the default 1 GiB budget.
  for s in $(seq 32); do complete 8 4089 $((100 + s)) & done
  for _ in $(seq 100); do
    [ "$(cap '.models[0].load.running + .models[0].load.waiting')" -ge 32 ] && [ "$(cap '.models[0].load.running')" -gt 0 ] && break
    sleep 0.2
  done
  sleep 1
  echo "dgr $t admits $(cap '.models[0].load.running') sessions of 4096 tokens in a budget of $(( $(cap '.memory.state_budget_bytes') >> 20 )) MiB" \
       "($(cap '.models[0].load.waiting') wait; bytes/token says $(( $(cap '.memory.state_budget_bytes') / (4096 * per_token) )))"
  stop
  jobs -p | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
done

echo "# done $(date -u +%FT%TZ) [load $(load)]"
