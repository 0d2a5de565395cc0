#!/bin/sh
# Rebuilds engine/src/main/resources/dgr/engine/kernel/q8-avx512vnni.bin and q8-avx2.bin from
# q8.c, and attn-avx512.bin and attn-avx2.bin from attn.c, and prints their SHA-256 (Q8Native and NativeAttention check them). Needs the toolchain pinned in TOOLCHAIN
# (other versions may give other bytes); the engine never runs this, NativeImagesFromSourceTest
# does, into a scratch folder (DGR_Q8_OUT), and compares the bytes with the committed images.
# Each image is its entry point (dgr_q8, dgr_attn) at offset 0, then the rest of its code and its constants
# (flat.ld), so RIP-relative references resolve at link time and no relocation is left.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
res="${DGR_Q8_OUT:-$here/../../engine/src/main/resources/dgr/engine/kernel}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/flags.sh"
build() { # name, target flags[, source stem (q8), entry (dgr_q8)]
  src="${3:-q8}"
  gcc $common $2 -c "$here/$src.c" -o "$tmp/$1.o"
  if objdump -r "$tmp/$1.o" | grep -q -E 'R_X86_64_(64|32|32S|GOT|PLT32.*[a-z]+@|COPY)'; then
    echo "$1: relocations a flat image cannot hold:" >&2; objdump -r "$tmp/$1.o" >&2; exit 1
  fi
  if objdump -d "$tmp/$1.o" | grep -q -E '\bcall\b'; then
    echo "$1: calls out of the kernel:" >&2; objdump -d "$tmp/$1.o" | grep call >&2; exit 1
  fi
  ld -nostdlib -static -T "$here/flat.ld" -e "${4:-dgr_q8}" -o "$tmp/$1.elf" "$tmp/$1.o"
  objcopy -O binary -j .text "$tmp/$1.elf" "$res/$src-$1.bin"
  sha256sum "$res/$src-$1.bin"
}
mkdir -p "$res"
build avx512vnni "$q8_avx512vnni"
build avx2 "$avx2"
build avx512 "$attn_avx512" attn dgr_attn
build avx2 "$avx2" attn dgr_attn
