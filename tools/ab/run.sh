#!/usr/bin/env bash
# Whole-model A/B of two dgr builds in one JVM: tools/ab/run.sh MODEL DIR_A DIR_B [THREADS] [BATCH] [STEPS]
# ENGINE=simd (or q8, scalar) picks the engine both builds run; default auto.
# DIR_A and DIR_B are checkouts with `mvn -o -q -pl gguf,engine compile` done (engine/target/classes).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
JDK="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
MODEL="$1"; A="$(cd "$2" && pwd)"; B="$(cd "$3" && pwd)"
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
for k in 0 1; do
  D=$([ $k = 0 ] && echo "$A" || echo "$B")
  [ -d "$D/engine/target/classes/dgr" ] || { echo "run.sh: $D is not compiled (run: mvn -o -q -pl gguf,engine compile there, with JAVA_HOME at JDK 25)" >&2; exit 2; }
  "$JDK/bin/javac" -nowarn --add-modules jdk.incubator.vector -cp "$D/engine/target/classes:$D/gguf/target/classes" \
    -d "$OUT/b$k" "$HERE/TokStep.java" 2>&1 | grep -v -i warning || true
done
"$JDK/bin/javac" -d "$OUT/driver" "$HERE/TwoBuilds.java"
"$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  -XX:ObjectAlignmentInBytes=32 -Xmx8g -Ddgr.ab.engine="${ENGINE:-auto}" -cp "$OUT/driver" TwoBuilds "$MODEL" "${4:-2}" "${5:-1}" "${6:-150}" "$A" "$B" "$OUT" 2>&1 \
  | grep -v '^WARNING'
