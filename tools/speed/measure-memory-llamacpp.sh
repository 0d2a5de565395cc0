#!/usr/bin/env bash
# measure-memory-llamacpp.sh: llama.cpp's half of tools/speed/measure-memory.sh (issue 26 item 4), split off so each
# script fits the lead's 5-minute window: resident memory of llama.cpp (node-llama-cpp's prebuilt CPU binaries,
# tools/llamacpp/memory.mjs) with a context of SESSIONS x TOKENS positions per K/V cache type, on the same file.
# llama.cpp allocates the whole context when it is made, so each figure is both its idle and its full RSS.
# Usage: tools/speed/measure-memory-llamacpp.sh [MODEL.gguf]   (default /tmp/models/llama-1b-Q4_0.gguf, synthesized if absent)
#   env: TYPES (default "f32 f16 bf16 q8_0"), SESSIONS (8), TOKENS (2048), THREADS (2)
# About 1-2 minutes (one process per type, each loads the model). Stops every process it started.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
TYPES="${TYPES:-f32 f16 bf16 q8_0}"
SESSIONS="${SESSIONS:-8}" TOKENS="${TOKENS:-2048}" THREADS="${THREADS:-2}"
LLAMACPP_DIR="${LLAMACPP_DIR:-$ROOT/tools/llamacpp}"
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset llama-1b --quant Q4_0 -o "$MODEL" >/dev/null
[ -d "$LLAMACPP_DIR/node_modules" ] || { echo "llama.cpp: $LLAMACPP_DIR/node_modules missing (see tools/llamacpp/README.md)"; exit 1; }
echo "# model $MODEL, $THREADS threads, $(nproc) cpus, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $TYPES; do
  (cd "$LLAMACPP_DIR" && timeout 120 node memory.mjs "$MODEL" "$SESSIONS" "$TOKENS" "$THREADS" "$t" 2>&1 | grep '^llama.cpp' || echo "llama.cpp $t: failed")
done
echo "# done $(date -u +%FT%TZ) [load $(cut -d' ' -f1-3 /proc/loadavg)]"
