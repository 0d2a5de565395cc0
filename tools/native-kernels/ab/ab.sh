#!/bin/sh
# Kernel A/B: two versions of q8.c timed in turns in one process (ab.c says how).
#   tools/native-kernels/ab/ab.sh A.c B.c TYPE AMX BATCH [REPS [COPIES [AHEAD]]]
# A.c and B.c are q8.c files, e.g. `git show HEAD~1:tools/native-kernels/q8.c > /tmp/a.c` and the working tree's.
# TYPE dgr_q8's type number (0 Q4_0, 1 Q8_0, 2 Q4_K, 3 Q6_K, 4 Q5_K, 5 IQ4_NL, 6 IQ4_XS, 7 MXFP4, 8 Q2_K, 9 Q3_K,
# 10 Q4_1, 11 Q5_0, 12 Q5_1); AMX 1 takes the AMX path for 16 batch rows at a time where the CPU has it.
# The AVX-512 VNNI image's compiler flags (flags.sh, as build.sh), so the code timed is the code the engine loads;
# IMAGE=avx2 takes the AVX2 image's instead (a CPU without AVX-512). COPIES (e.g. 256) and AHEAD (4096, the
# engine's prefetch distance) time weights read from memory, as a decode step reads them (ab.c).
set -eu
[ $# -ge 5 ] || { echo "usage: $0 A.c B.c TYPE AMX BATCH [REPS [COPIES [AHEAD]]]" >&2; exit 2; }
. "$(dirname "$0")/pair.sh"
case "${IMAGE:-avx512vnni}" in
  avx512vnni) flags="$q8_avx512vnni" ;;
  avx2) flags="$avx2" ;;
  *) echo "IMAGE must be avx512vnni or avx2, not '$IMAGE'" >&2; exit 2 ;;
esac
ab_pair "$1" "$2" dgr_q8 "$flags" "$here/ab.c" "$tmp/ab"
"$tmp/ab" "$3" "$4" "$5" "${6:-2000}" "${7:-1}" "${8:-0}"
