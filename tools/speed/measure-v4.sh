#!/usr/bin/env bash
# DeepSeek-V4 lane speed (issue 26, item 3), for a quiet machine; about 4 minutes on 2 cores.
#   tools/speed/measure-v4.sh [MODEL.gguf]   (default: dsv4-small Q8_0, made once by `dgr synth`)
# Prints, for java-q8 (the default engine where its native kernel runs) and java-simd (--engine simd,
# float32 activations), 2 threads: generation tok/s at batch 1, a 128-token prompt in one forward, and
# aggregate generation tok/s at 8 sessions (DecodeBench, the engine alone: no HTTP), after 1000 untimed
# batch-1 steps (the JIT needs a few hundred on a model this small, and 128 steps after 256 still ran
# partly compiled), each three times (prompt: five, one forward of 128 rows takes about 0.1 s); read the
# median. Each line gives wall
# time and CPU time; on a shared machine only the CPU figure means much. One JVM at a time; each exits
# before the next starts, so nothing is left running.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-${TMPDIR:-/tmp}/dgr-measure-dsv4-small-Q8_0.gguf}"
source "$ROOT/cli/src/dist/bin/dgr"   # find_jdk (nothing runs when sourced)
JDK="$(find_jdk)" || { echo "measure-v4: no Java 25 or newer found" >&2; exit 1; }
"$ROOT/dgr" --version >/dev/null      # builds the jars when sources changed
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset dsv4-small --quant Q8_0 -o "$MODEL" >/dev/null
echo "measure-v4: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), model $MODEL"
for engine in q8 simd; do
  "$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32 \
    -cp "$ROOT/cli/target/lib/*" dgr.engine.llama.DecodeBench "$MODEL" --"$engine" --threads 2 \
    --batches 1,1,1,8,8,8 --steps 128 --prompts 128,128,128,128,128 --chunk 128 --steady 0 --warmup 1000 2>&1 \
    | grep -E '^(model|decode|prompt)' | sed -e "s/^/$engine: /" -e 's/; activations.*//'
done
