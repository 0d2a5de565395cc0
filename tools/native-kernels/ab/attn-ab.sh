#!/bin/sh
# Attention kernel A/B: two versions of attn.c's prompt kernels timed in turns in one process (attn-ab.c says how).
#   tools/native-kernels/ab/attn-ab.sh A.c B.c [REPS [OFF]]
# A.c and B.c are attn.c files, e.g. `git show HEAD~1:tools/native-kernels/attn.c > /tmp/a.c` and the working tree's.
# The image's compiler flags (flags.sh, as build.sh): the AVX-512 image's on a CPU with AVX-512 F, else AVX2's;
# IMAGE=avx2 or IMAGE=avx512 picks one. OFF: the arrays' start past a 64-byte boundary, in floats (4 is a Java
# array's element 0). Exits 1 when the two builds' outputs differ in any bit.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 A.c B.c [REPS [OFF]]" >&2; exit 2; }
. "$(dirname "$0")/pair.sh"
image="${IMAGE:-$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)}"
case "$image" in
  avx512) flags="$attn_avx512" ;;
  avx2) flags="$avx2" ;;
  *) echo "IMAGE must be avx512 or avx2, not '$image'" >&2; exit 2 ;;
esac
ab_pair "$1" "$2" dgr_attn "$flags" "$here/attn-ab.c" "$tmp/attn-ab"
echo "image $image"
"$tmp/attn-ab" "${3:-200}" "${4:-0}"
