#!/bin/sh
# q8.c's AVX-512 VNNI and AMX code, and attn.c's AVX-512 code, checked against their AVX2 code on any x86-64 CPU
# with AVX2 (check.c and check-attn.c say how).
#   tools/native-kernels/emu/check.sh [Q8.C [ATTN.C]]     (defaults: tools/native-kernels/q8.c, attn.c)
# Needs gcc and SIMDe's headers (Debian: apt-get install libsimde-dev). The AVX2 code is built with the image's
# flags (flags.sh); the AVX-512 code with its intrinsics taken from emu.h, for this CPU.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="${1:-$here/../q8.c}"
attn="${2:-$here/../attn.c}"
[ -f /usr/include/simde/x86/avx512.h ] || { echo "check.sh needs SIMDe's headers: apt-get install libsimde-dev" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../flags.sh"
gcc $common $avx2 -Ddgr_q8=dgr_q8_avx2 -c "$src" -o "$tmp/avx2.o"
# the same source, its AVX-512 and AMX branches selected and their intrinsics from emu.h
sed -e 's|#include <immintrin.h>|#include "emu.h"|' -e 's/__AVX512VNNI__/DGR_EMU_AVX512/g' -e 's/__AMX_INT8__/DGR_EMU_AMX/g' "$src" > "$tmp/q8-emu.c"
gcc -O1 -std=gnu11 -ffp-contract=off -fno-fast-math -march=x86-64-v3 -DDGR_EMU_AVX512 -DDGR_EMU_AMX -Ddgr_q8=dgr_q8_emu \
  -Wno-attributes -Wno-psabi -I "$here" -c "$tmp/q8-emu.c" -o "$tmp/emu.o"
gcc -O2 "$here/check.c" "$tmp/avx2.o" "$tmp/emu.o" -o "$tmp/check"
"$tmp/check"
# attn.c's AVX-512 code against its AVX2 code the same way (check-attn.c)
gcc $common $avx2 -Ddgr_attn=dgr_attn_avx2 -c "$attn" -o "$tmp/attn-avx2.o"
sed -e 's|#include <immintrin.h>|#include "emu.h"|' -e 's/__AVX512F__/DGR_EMU_AVX512F/g' "$attn" > "$tmp/attn-emu.c"
gcc -O1 -std=gnu11 -ffp-contract=off -fno-fast-math -march=x86-64-v3 -DDGR_EMU_AVX512F -Ddgr_attn=dgr_attn_emu \
  -Wno-attributes -Wno-psabi -I "$here" -c "$tmp/attn-emu.c" -o "$tmp/attn-emu.o"
gcc -O2 -march=x86-64-v3 "$here/check-attn.c" "$tmp/attn-avx2.o" "$tmp/attn-emu.o" -lm -o "$tmp/check-attn"
"$tmp/check-attn"
