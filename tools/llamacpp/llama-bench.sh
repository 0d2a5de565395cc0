#!/usr/bin/env bash
# llama-bench.sh: llama.cpp's own llama-bench, against the same prebuilt CPU libraries compare.mjs loads.
# Usage: tools/llamacpp/llama-bench.sh [llama-bench's arguments], e.g. -m MODEL.gguf -t 2 -p 128,1024 -n 0 -r 3
#   LLAMACPP_TOOL=llama-batched-bench runs llama-batched-bench instead (built beside it, the same way; with -nr it
#   runs deepseek4 files, which tools/speed/v4-llamacpp.sh measures).
#
# The first call builds both (about 30 seconds, needs g++ and git): each tool's two sources come from the
# llama.cpp tree node-llama-cpp bundles (gitRelease.bundle, release v0.4.0, the tree the prebuilt libraries were
# built from), and they are linked against the prebuilt libllama, libllama-common, libggml and libggml-base. Those
# load the best CPU variant the machine runs (libggml-cpu-sapphirerapids.so with AMX, -zen4, -icelake, -haswell,
# ...) from the directory of the binary, so llama.cpp gets its best kernels without a build for this CPU (the
# source build in tools/speed/v4-llamacpp.sh takes about an hour on 2 cores; deepseek4 files need neither: the
# prebuilt scheduler aborts on them unless weights stay unrepacked, which llama-batched-bench's -nr does and
# llama-bench cannot). The binaries and the libraries go to LLAMA_BENCH_DIR
# (default tools/llamacpp/build, git-ignored): a self-contained directory that can be copied to another machine
# of the same architecture.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
NM="${LLAMACPP_DIR:-$HERE}/node_modules"
BINS="$NM/@node-llama-cpp/linux-x64/bins/linux-x64"
BUNDLE="$NM/node-llama-cpp/llama/gitRelease.bundle"
DIR="${LLAMA_BENCH_DIR:-$HERE/build}"
TOOL="${LLAMACPP_TOOL:-llama-bench}"
case "$TOOL" in llama-bench|llama-batched-bench) ;; *) echo "llama-bench.sh: LLAMACPP_TOOL must be llama-bench or llama-batched-bench" >&2; exit 2 ;; esac
if [ ! -x "$DIR/llama-bench" ] || [ ! -x "$DIR/llama-batched-bench" ]; then
  for f in "$BINS/libllama.v0.4.0.so" "$BUNDLE"; do
    [ -e "$f" ] || { echo "llama-bench.sh: $f is missing; run 'npm install --ignore-scripts' in tools/llamacpp" >&2; exit 2; }
  done
  command -v g++ >/dev/null || { echo "llama-bench.sh: g++ is not installed (apt-get install g++)" >&2; exit 2; }
  SRC="$(mktemp -d)"; trap 'rm -rf "$SRC"' EXIT
  echo "llama-bench.sh: building $DIR/llama-bench and llama-batched-bench against $BINS" >&2
  git -c advice.detachedHead=false clone -q "$BUNDLE" "$SRC"
  mkdir -p "$DIR"
  cp "$BINS"/*.so "$DIR/"
  # tool name, its source folder: each tool's two sources linked against the prebuilt libraries
  for t in llama-bench:llama-bench llama-batched-bench:batched-bench; do
    name="${t%%:*}" src="$SRC/tools/${t#*:}"
    g++ -O2 -DNDEBUG -std=c++17 -DGGML_BACKEND_SHARED -DGGML_SHARED -DLLAMA_SHARED \
      -I"$src" -I"$SRC/common" -I"$SRC/vendor" -I"$SRC/include" -I"$SRC/ggml/include" \
      "$src"/*.cpp -o "$DIR/$name.tmp" \
      -L"$DIR" -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so \
      -Wl,-rpath,'$ORIGIN' -lpthread
    mv "$DIR/$name.tmp" "$DIR/$name"
  done
fi
exec "$DIR/$TOOL" "$@"
