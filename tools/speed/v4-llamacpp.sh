#!/usr/bin/env bash
# v4-llamacpp.sh: the DeepSeek-V4 lane, dgr against llama.cpp, same files, same threads, same hour (issue 26, item 3).
#   tools/speed/v4-llamacpp.sh [QUANT ...]     (default: Q8_0 Q4_K_M; each a dsv4-small file made once by `dgr synth`)
# For each file, 2 threads (THREADS overrides):
#   dgr <quant> batch 1 / aggregate at 8 / prompt 128: java-q8 as v4-decodebench.sh runs it (the engine alone, no HTTP;
#     wall and CPU-time tok/s; read the medians).
#   llama.cpp <quant>: llama-batched-bench -nr with 128 prompt + 64 generated tokens per sequence at 1, 1 and 8
#     sequences (the first row warms up): S_PP at B=1 is prompt 128, S_TG at B=1 generation at batch 1, S_TG at
#     B=8 the aggregate at 8 sessions.
# Why -nr (no repacked weights): at this llama.cpp (node-llama-cpp 3.21.1's bundle, 80fb11a) on a CPU with AMX,
# deepseek4 aborts with GGML_ASSERT(*cur_backend_id != -1) while reserving its graph. The node no backend takes
# is attn_wo_a-N, the MUL_MAT of the grouped output LoRA blk.N.attn_output_a.weight (3-D, [256,128,4] on
# dsv4-small) by its permuted, non-contiguous input: the loader put that weight into the AMX buffer (its
# supports_op test uses a contiguous input), the AMX buffer refuses a non-contiguous src1, and the CPU backend
# refuses any op whose weight sits in a non-host buffer. -nr keeps every weight in plain CPU buffers; llama-bench
# has no such flag at this tag (its -ot X=CPU still picks the AMX buffer), so it still aborts. What -nr costs
# llama.cpp: Q8_0 has no x86 repack, so only AMX (prompt); Q4_K_M also loses its AVX2 8x8 repack (q4_K_8x8).
# llama-batched-bench comes from LLAMACPP_BIN (default /work/llamacpp-build/build/bin) where a source build is there
# (CPU only, native: the bottom of this file, about an hour), else from tools/llamacpp/llama-bench.sh, which
# links its source against node-llama-cpp's prebuilt libraries in seconds (their best CPU variant for this CPU;
# with -nr they run deepseek4 files too: twenty-third session, Intel Xeon with AMX).
# About 3-4 minutes on a quiet 2-core machine; one process at a time, each exits before the next starts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
THREADS="${THREADS:-2}"
LLAMACPP_BIN="${LLAMACPP_BIN:-/work/llamacpp-build/build/bin}"
if [ -z "${LLAMA_BATCHED_BENCH:-}" ]; then
  LLAMA_BATCHED_BENCH="$LLAMACPP_BIN/llama-batched-bench"
  if [ ! -x "$LLAMA_BATCHED_BENCH" ] && [ -d "${LLAMACPP_DIR:-$ROOT/tools/llamacpp}/node_modules" ]; then
    LLAMACPP_TOOL=llama-batched-bench "$ROOT/tools/llamacpp/llama-bench.sh" --help >/dev/null 2>&1 || true   # builds on first use
    LLAMA_BATCHED_BENCH="${LLAMA_BENCH_DIR:-$ROOT/tools/llamacpp/build}/llama-batched-bench"
  fi
fi
QUANTS=("$@")
[ ${#QUANTS[@]} -gt 0 ] || QUANTS=(Q8_0 Q4_K_M)
source "$ROOT/cli/src/dist/bin/dgr"   # find_jdk (nothing runs when sourced)
source "$ROOT/tools/speed/v4-decodebench.sh"
JDK="$(find_jdk)" || { echo "v4-llamacpp: no Java 25 or newer found" >&2; exit 1; }
"$ROOT/dgr" --version >/dev/null      # builds the jars when sources changed
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# v4-llamacpp: $(date -u +%FT%TZ), $(nproc) CPUs, $THREADS threads, load $(load)"
if [ -x "$LLAMA_BATCHED_BENCH" ]; then
  echo "# llama.cpp: $LLAMA_BATCHED_BENCH (node-llama-cpp 3.21.1's bundle, release v0.4.0, commit 80fb11a), -nr: see above"
else
  echo "# llama.cpp: no llama-batched-bench at $LLAMA_BATCHED_BENCH (build it: see the end of this script)"
fi
for q in "${QUANTS[@]}"; do
  model="${TMPDIR:-/tmp}/dgr-measure-dsv4-small-$q.gguf"
  [ -f "$model" ] || "$ROOT/dgr" synth --preset dsv4-small --quant "$q" -o "$model" >/dev/null
  v4_decodebench "$JDK" "$ROOT" "$model" q8 "$THREADS" \
    | grep -E '^(decode|prompt)' | sed -e "s/^/dgr $q: /" -e 's/; activations.*//'
  if [ -x "$LLAMA_BATCHED_BENCH" ]; then
    "$LLAMA_BATCHED_BENCH" -m "$model" -t "$THREADS" -c 2048 -b 2048 -ub 512 -npp 128 -ntg 64 -npl 1,1,8 -nr 2>&1 \
      | grep -E '^\|\s+[0-9]+|GGML_ASSERT' | sed -e "s/^/llama.cpp $q batched -nr (PP TG B N_KV T_PP S_PP T_TG S_TG T S): /" \
      || echo "llama.cpp $q: llama-batched-bench failed"
    echo "llama.cpp $q: [load $(load)]"
  fi
done
echo "# done [load $(load)]"

# Building the llama.cpp side (about 1 h on 2 shared cores; nothing here runs it):
#   git clone tools/llamacpp/node_modules/node-llama-cpp/llama/gitRelease.bundle /work/llamacpp-build/src
#   cmake -S /work/llamacpp-build/src -B /work/llamacpp-build/build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
#     -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=ON \
#     -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF
#   nice -n 19 cmake --build /work/llamacpp-build/build --target llama-bench llama-batched-bench -j2
