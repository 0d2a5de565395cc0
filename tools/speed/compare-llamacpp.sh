#!/usr/bin/env bash
# compare-llamacpp.sh: dgr against llama.cpp on the same file, same threads, same hour (issue 26's table).
# Usage: tools/speed/compare-llamacpp.sh [MODEL.gguf] [THREADS]
#   MODEL defaults to /tmp/models/llama-1b-Q4_0.gguf (made by `./dgr synth --preset llama-1b --quant Q4_0`).
# Needs tools/llamacpp/node_modules (see tools/llamacpp/README.md; LLAMACPP_DIR overrides where it lives).
# Prints one line per figure: "<side> prompt <L> <tok/s>" and "<side> decode depth <L> <tok/s>", each with
# the load average, so a figure taken on a busy machine can be seen as such. Runs about 5 minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-/tmp/models/llama-1b-Q4_0.gguf}"
THREADS="${2:-2}"
LLAMACPP_DIR="${LLAMACPP_DIR:-$ROOT/tools/llamacpp}"
PROMPTS="${PROMPTS:-128,1024,4096}"
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset llama-1b --quant Q4_0 -o "$MODEL"
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# model $MODEL, $THREADS threads, $(nproc) cpus, $(date -u +%FT%TZ)"
for L in ${PROMPTS//,/ }; do
  out="$(cd "$LLAMACPP_DIR" && node compare.mjs -m "$MODEL" -t "$THREADS" --ctx $((L + 64)) --bench 16 --prompt-len "$L" --no-tf 2>&1 | grep '^bench batch=1' || true)"
  pp="$(sed -n 's/.*= \([0-9.]*\) prompt tok\/s.*/\1/p' <<<"$out")"
  tg="$(sed -n 's/.*tokens in [0-9]* ms = \([0-9.]*\) tok\/s.*/\1/p' <<<"$out")"
  echo "llama.cpp prompt $L ${pp:-?} tok/s; decode depth $L ${tg:-?} tok/s [load $(load)]"
done

cd "$ROOT"
CP="engine/target/classes:gguf/target/classes"
[ -d engine/target/classes ] || mvn -B -q -pl engine -am install -DskipTests >/dev/null
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
"$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  -XX:ObjectAlignmentInBytes=32 -cp "$CP" dgr.engine.llama.DecodeBench "$MODEL" --threads "$THREADS" \
  --prompts "$PROMPTS" --depths "$PROMPTS" --batches 1 --steady 64 2>&1 | sed 's/^/dgr /'
echo "# done [load $(load)]"
