#!/usr/bin/env bash
# Decode speed under the two collectors the launcher uses: ParallelGC (run, bench) and dgr serve's G1 flags,
# alternated 3 rounds each on llama-110m Q4_0 (made on first use), 2 threads, 128 tokens. About 2 minutes.
#   tools/harden/gc-ab.sh [MODEL.gguf]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODEL="${1:-$HOME/.cache/dgr/models/llama-110m-Q4_0-seed42.gguf}"
[ -f "$MODEL" ] || { echo "no $MODEL: pass a GGUF, or run dgr bench once (it makes llama-110m)" >&2; exit 1; }
G1="-XX:+UseG1GC -XX:MaxNewSize=64m -XX:G1PeriodicGCInterval=10000 -XX:MaxHeapFreeRatio=30 -XX:MinHeapFreeRatio=10 -XX:TrimNativeHeapInterval=10000"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); model $MODEL"
for round in 1 2 3; do
  for gc in parallel g1; do
    opts="-XX:+UseParallelGC"; [ "$gc" = g1 ] && opts="$G1"
    line="$(DGR_JAVA_OPTS="$opts" "$ROOT/dgr" run -m "$MODEL" -n 128 --ignore-eos -t 2 -p "Once upon a time" 2>&1 \
      | grep -E 'generation: [0-9]+ tokens' || echo "no speed line")"
    echo "round $round $gc: $line"
  done
done
