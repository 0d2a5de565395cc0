#!/usr/bin/env bash
# Prompt and long-context A/B of two dgr builds in one JVM:
#   tools/ab/prompt.sh MODEL DIR_A DIR_B [DEPTH] [REPS128] [REPS1024] [REPS4096] [STEPS]
# Alternates, in random order, prompts of 128, 1024 and 4096 tokens (32 rows per forward, AB_CHUNK=N for N) and
# batch-1 decode steps at DEPTH; DIR_A and DIR_B compiled as for run.sh.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
JDK="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
MODEL="$1"; A="$(cd "$2" && pwd)"; B="$(cd "$3" && pwd)"
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
for k in 0 1; do
  D=$([ $k = 0 ] && echo "$A" || echo "$B")
  "$JDK/bin/javac" -nowarn --add-modules jdk.incubator.vector -cp "$D/engine/target/classes:$D/gguf/target/classes" \
    -d "$OUT/b$k" "$HERE/PromptStep.java" 2>&1 | grep -v -i warning || true
done
"$JDK/bin/javac" -d "$OUT/driver" "$HERE/AbPrompt.java"
"$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  -XX:ObjectAlignmentInBytes=32 -Xmx8g -cp "$OUT/driver" AbPrompt "$MODEL" "$A" "$B" "$OUT" "${4:-4096}" "${5:-8}" "${6:-3}" "${7:-1}" "${8:-24}" 2>&1 \
  | grep --line-buffered -v '^WARNING'
