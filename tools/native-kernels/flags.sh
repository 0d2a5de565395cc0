# Compiler flags of the native images, sourced by build.sh (which builds them) and ab/ab.sh, ab/attn-ab.sh (which time
# q8.c and attn.c with the same flags, so that the code they time is the code the engine loads). -ffp-contract=off and
# no fast-math keep each kernel's stated order of operations.
common="-O2 -std=gnu11 -ffp-contract=off -fno-fast-math -fPIC -ffreestanding -fno-stack-protector
  -fno-asynchronous-unwind-tables -fno-exceptions -fcf-protection=none -fno-builtin"
q8_avx512vnni="-march=x86-64-v3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mf16c -mfma -mamx-tile -mamx-int8"
attn_avx512="-march=x86-64-v3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mf16c -mfma"
avx2="-march=x86-64-v3 -mno-avx512f"
