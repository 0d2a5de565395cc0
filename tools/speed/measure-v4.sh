#!/usr/bin/env bash
# DeepSeek-V4 lane speed (issue 26, item 3), for a quiet machine; about 4 minutes on 2 cores.
#   tools/speed/measure-v4.sh [MODEL.gguf]   (default: dsv4-small Q8_0, made once by `dgr synth`)
# Prints, for java-q8 (the default engine where its native kernel runs) and java-simd (--engine simd,
# float32 activations), 2 threads: generation tok/s at batch 1, a 128-token prompt in one forward, and
# aggregate generation tok/s at 8 sessions (v4-decodebench.sh says how: DecodeBench, the engine alone, after
# 3,000 untimed batch-1 steps; read the medians). Each line gives wall
# time and CPU time; on a shared machine only the CPU figure means much. One JVM at a time; each exits
# before the next starts, so nothing is left running.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-${TMPDIR:-/tmp}/dgr-measure-dsv4-small-Q8_0.gguf}"
source "$ROOT/cli/src/dist/bin/dgr"   # find_jdk (nothing runs when sourced)
source "$ROOT/tools/speed/v4-decodebench.sh"
JDK="$(find_jdk)" || { echo "measure-v4: no Java 25 or newer found" >&2; exit 1; }
"$ROOT/dgr" --version >/dev/null      # builds the jars when sources changed
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset dsv4-small --quant Q8_0 -o "$MODEL" >/dev/null
echo "measure-v4: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), model $MODEL"
for engine in q8 simd; do
  v4_decodebench "$JDK" "$ROOT" "$MODEL" "$engine" 2 \
    | grep -E '^(model|decode|prompt)' | sed -e "s/^/$engine: /" -e 's/; activations.*//'
done
