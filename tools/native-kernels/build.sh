#!/bin/sh
# Rebuilds engine/src/main/resources/dgr/engine/kernel/q4q8-avx512vnni.bin from q4q8.c and prints
# its SHA-256 (Q8Native checks it). Needs gcc and binutils; the engine never runs this.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../engine/src/main/resources/dgr/engine/kernel/q4q8-avx512vnni.bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -std=c11 -march=x86-64-v3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mf16c -mfma \
    -ffp-contract=off -fno-fast-math -fPIC -ffreestanding -fno-stack-protector -fno-asynchronous-unwind-tables \
    -fno-exceptions -fcf-protection=none -ffunction-sections -Dq4q8=q4q8 \
    -c "$here/q4q8.c" -o "$tmp/q4q8.o"
objcopy --rename-section .text.q4q8=.text.entry "$tmp/q4q8.o"
ld -nostdlib -static -T "$here/flat.ld" -o "$tmp/q4q8.elf" "$tmp/q4q8.o"
if [ -n "$(objdump -r "$tmp/q4q8.o" | grep -v -e '^$' -e 'RELOCATION' -e 'OFFSET' -e 'file format' -e 'R_X86_64_PC32' -e 'R_X86_64_PLT32' || true)" ]; then
  echo "unexpected relocations:" >&2; objdump -r "$tmp/q4q8.o" >&2; exit 1
fi
mkdir -p "$(dirname "$out")"
objcopy -O binary -j .text "$tmp/q4q8.elf" "$out"
sha256sum "$out"
