#!/usr/bin/env bash
# Does writing SimdQ4_0 and SimdQ8_0 out per format still pay? Builds this checkout with
# simd-blocks.patch applied (one shared rows-4/2/1 walk, the format's chunk decode inlined) in a
# temporary worktree and decodes llama-110m Q8_0 on the simd engine with both builds in one JVM
# (run.sh), batch 4 and batch 1. The comment in SimdQ8_0 records what this printed on 2026-12-02
# (shared machine): the patched build 9-16% slower at batch 4. About 3-4 minutes on a quiet machine.
#   tools/ab/simd-blocks.sh [STEPS]       (run from the repository root, JAVA_HOME at JDK 25)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
STEPS="${1:-150}"
WORK="$(mktemp -d)"
cleanup() { git -C "$ROOT" worktree remove --force "$WORK/patched" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$ROOT"
mvn -B -q -o -pl gguf,engine compile >/dev/null
git worktree add -q --detach "$WORK/patched" HEAD
git -C "$WORK/patched" apply "$ROOT/tools/ab/simd-blocks.patch"
(cd "$WORK/patched" && mvn -B -q -o -pl gguf,engine compile >/dev/null)
MODEL="${DGR_AB_MODEL:-$HOME/.cache/dgr/ab/llama-110m-Q8_0.gguf}"
if [ ! -f "$MODEL" ]; then
  mkdir -p "$(dirname "$MODEL")"
  cat > "$WORK/Make.java" <<'JAVA'
public class Make { public static void main(String[] a) {
    dgr.gguf.synth.Synth.write(dgr.gguf.synth.SynthPreset.byName("llama-110m"), dgr.gguf.synth.QuantMix.parse("Q8_0"), 1, java.nio.file.Path.of(a[0]));
} }
JAVA
  "$JAVA_HOME/bin/java" -cp "$ROOT/gguf/target/classes" "$WORK/Make.java" "$MODEL"
fi
for b in 4 1; do
  echo "batch $b (A: written out, B: shared walk):"
  ENGINE=simd "$ROOT/tools/ab/run.sh" "$MODEL" "$ROOT" "$WORK/patched" 2 "$b" "$STEPS"
done
