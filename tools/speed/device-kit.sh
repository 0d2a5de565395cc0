#!/usr/bin/env bash
# device-kit.sh: packs what tools/speed/pinned-rounds.sh needs on a machine that has neither Java nor llama.cpp (the
# workplace's device machine, lent to some sessions for 15 minutes: docs/engine.md, "Measured on an AMX machine"):
# a jlink'd Temurin 25 runtime (the modules DecodeBench uses), this checkout's compiled engine and gguf classes,
# and llama-bench with node-llama-cpp's prebuilt CPU libraries (tools/llamacpp/llama-bench.sh builds it; the CPU
# variants a current x86-64 server picks from are kept). One tar.xz, under the 64 MiB a device call carries.
# Usage: tools/speed/device-kit.sh [KIT.tar.xz]   (default .devkit/kit.tar.xz; add /.devkit/ to .git/info/exclude)
# Then, in one device call carrying .devkit:
#   mkdir -p /tmp/k && tar xJf .devkit/kit.tar.xz -C /tmp/k && tools/speed/pinned-rounds.sh /tmp/k
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
KIT="${1:-$ROOT/.devkit/kit.tar.xz}"
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
for d in "$ROOT/engine/target/classes" "$ROOT/gguf/target/classes"; do
  [ -d "$d" ] || { echo "device-kit.sh: $d is missing; build first (mvn -q -o install -DskipTests)" >&2; exit 2; }
done
"$ROOT/tools/llamacpp/llama-bench.sh" --help >/dev/null 2>&1 || true   # builds tools/llamacpp/build on first use
LCPP="${LLAMA_BENCH_DIR:-$ROOT/tools/llamacpp/build}"
[ -x "$LCPP/llama-bench" ] || { echo "device-kit.sh: no llama-bench in $LCPP (tools/llamacpp/README.md)" >&2; exit 2; }
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$JAVA_HOME/bin/jlink" --add-modules java.base,jdk.incubator.vector,java.management,jdk.management \
  --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$TMP/jre" 2>/dev/null
mkdir -p "$TMP/cp" "$TMP/lcpp"
cp -r "$ROOT/engine/target/classes" "$TMP/cp/engine"
cp -r "$ROOT/gguf/target/classes" "$TMP/cp/gguf"
cp "$LCPP/llama-bench" "$LCPP"/libllama*.so "$LCPP"/libggml.v*.so "$LCPP/libggml-base.so" "$TMP/lcpp/"
for v in sapphirerapids zen4 icelake skylakex haswell x64; do cp "$LCPP/libggml-cpu-$v.so" "$TMP/lcpp/"; done
{ git -C "$ROOT" rev-parse HEAD | tr -d "\n"; [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] || printf " and uncommitted changes"; echo; } > "$TMP/commit"
mkdir -p "$(dirname "$KIT")"
tar cJf "$KIT" -C "$TMP" .
size=$(stat -c %s "$KIT")
echo "device-kit.sh: $KIT, $((size / 1048576)) MiB, commit $(cat "$TMP/commit")"
[ "$size" -lt $((60 * 1048576)) ] || { echo "device-kit.sh: over 60 MiB, too big to carry with the tree" >&2; exit 1; }
