#!/usr/bin/env bash
# Writes the IQ codebooks dgr decodes with (gguf/src/main/resources/dgr/gguf/codec/iq-grids.bin)
# from a built libggml-base.so, the library llama.cpp's dequantize_row_iq* read them from.
# They are data that define the IQ1/IQ2/IQ3 formats (ggml-common.h, MIT licence), not code:
# a file in one of these types cannot be decoded without the same tables.
#   tools/iq-grids/extract.sh [path/to/libggml-base.so]
# Default: the one node-llama-cpp ships (cd tools/llamacpp && npm install --ignore-scripts).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=${1:-$root/tools/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so}
out=$root/gguf/src/main/resources/dgr/gguf/codec/iq-grids.bin
[ -f "$lib" ] || { echo "no $lib (run npm install in tools/llamacpp, or pass a libggml-base.so)" >&2; exit 1; }
# .rodata's file offset minus its address: added to a symbol's address gives its place in the file.
read -r addr off < <(readelf -S -W "$lib" | awk '$2 == ".rodata" {print $4, $5}')
delta=$(( 16#$off - 16#$addr ))
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
# Order and sizes are IqGrids' (entries x bytes per entry).
for spec in iq2xxs_grid:2048 iq2xs_grid:4096 iq2s_grid:8192 iq3xxs_grid:1024 iq3s_grid:2048 iq1s_grid:16384; do
  name=${spec%%:*}; size=${spec##*:}
  read -r a s < <(nm -S "$lib" | awk -v n="$name" '$4 == n {print $1, $2}')
  [ -n "${a:-}" ] || { echo "symbol $name not in $lib" >&2; exit 1; }
  [ $((16#$s)) -eq "$size" ] || { echo "$name is $((16#$s)) bytes, expected $size" >&2; exit 1; }
  dd if="$lib" bs=1 skip=$(( 16#$a + delta )) count="$size" status=none >> "$tmp"
done
mkdir -p "$(dirname "$out")"
mv "$tmp" "$out"; trap - EXIT
sha256sum "$out"
