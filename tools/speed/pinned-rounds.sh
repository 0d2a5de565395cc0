#!/usr/bin/env bash
# pinned-rounds.sh: issue 26's prompt table, dgr against llama.cpp, both pinned to the same two CPUs of two different
# cores (so each sees the 2-CPU machine the issue's figures are for, on a bigger host), in ROUNDS alternating rounds.
# Usage: tools/speed/pinned-rounds.sh KIT_DIR   (KIT_DIR: tools/speed/device-kit.sh's kit, unpacked)
#   ROUNDS (default 3), QUANTS (default "Q4_0 Q4_K_M"), PROMPTS (default 128,1024), DEPTH (default 0; e.g. 4096 adds a
#   batch-1 decode at that depth on both sides, in the first round only), CPUS (default: the last CPU of each of the
#   last two cores lscpu lists), MODELS (default /tmp/m; files made there with DecodeBench --synth, the bytes of
#   `dgr synth --preset llama-1b --quant Q`), AMX_AB (default none; e.g. "Q6_K Q4_K all": after the rounds, one JVM per
#   set on AMX_AB_QUANT (default Q4_K_M) times each prompt AMX_AB_ROUNDS times (default 5) with AMX and with those types'
#   matrices on the VNNI path instead, alternating: DecodeBench --amx-ab, --amx-off; same bits). In the first round dgr
#   runs each prompt once more with --kernel-account: each weight type's share of the prompt's thread time and its
#   kernel's rate, the rounding's share, the workers' waits and the rest (attention, norms, RoPE). Writes its log to $OUT/rounds.txt when OUT is set (a device call), and
#   ends with each figure's median over the rounds and the ratios of the medians.
# About 2.5 minutes a round on a 2 GHz Xeon for the two default files (synthesis first: 30 s on 16 cores).
set -euo pipefail
KIT="${1:?usage: pinned-rounds.sh KIT_DIR}"
ROUNDS="${ROUNDS:-3}"; QUANTS="${QUANTS:-Q4_0 Q4_K_M}"; PROMPTS="${PROMPTS:-128,1024}"; DEPTH="${DEPTH:-0}"; MODELS="${MODELS:-/tmp/m}"
if [ -z "${CPUS:-}" ]; then
  CPUS=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -k1,1n | awk -F, '{last[$2] = $1} END {for (c in last) print c, last[c]}' \
    | sort -n | tail -2 | awk '{print $2}' | paste -sd,)
fi
LOG="${OUT:+$OUT/rounds.txt}"; LOG="${LOG:-/dev/null}"
say() { echo "$@" | tee -a "$LOG"; }
JAVA=("$KIT/jre/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32
      -cp "$KIT/cp/engine:$KIT/cp/gguf" dgr.engine.llama.DecodeBench)
start=$(date +%s)
t() { echo "t=$(( $(date +%s) - start ))s load $(cut -d' ' -f1-3 /proc/loadavg)"; }
say "# pinned-rounds.sh: kit of $(cat "$KIT/commit"), CPUs $CPUS, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(date -u)"
say "# AMX: $(grep -o -m1 'amx_int8' /proc/cpuinfo || echo none)"
mkdir -p "$MODELS"
for q in $QUANTS; do
  "${JAVA[@]}" "$MODELS/$q.gguf" --synth "llama-1b:$q" --threads "$(nproc)" --batches 1 --steps 1 --steady 0 --warmup 0 --prompt 0 2>&1 \
    | grep -E '^wrote' | tee -a "$LOG" || true
done
RES="$(mktemp)"; trap 'rm -f "$RES"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  say "# round $r $(t)"
  for q in $QUANTS; do
    f="$MODELS/$q.gguf"
    say "## llama.cpp $q $(t)"
    taskset -c "$CPUS" "$KIT/lcpp/llama-bench" -m "$f" -t 2 -p "$PROMPTS" -n 0 -r 3 2>&1 | grep -E '^\|.*pp[0-9]' | tee -a "$LOG" \
      | awk -F'|' -v q="$q" -v r="$r" '{gsub(/ /, "", $7); split($8, v, "±"); gsub(/ /, "", v[1]); print "llama.cpp", q, $7, v[1], r}' >> "$RES"
    depth=()
    if [ "$DEPTH" -gt 0 ] && [ "$r" = 1 ]; then
      taskset -c "$CPUS" "$KIT/lcpp/llama-bench" -m "$f" -t 2 -p 0 -n 16 -d "$DEPTH" -r 1 2>&1 | grep -E '^\|.*tg' | tee -a "$LOG" \
        | awk -F'|' -v q="$q" -v r="$r" '{split($8, v, "±"); gsub(/ /, "", v[1]); print "llama.cpp", q, "depth", v[1], r}' >> "$RES"
      depth=(--depths "$DEPTH")
    fi
    account=(); [ "$r" = 1 ] && account=(--kernel-account)
    say "## dgr $q $(t)"
    taskset -c "$CPUS" "${JAVA[@]}" "$f" --threads 2 --batches 1 --steps 16 --steady 0 --prompts "$PROMPTS" "${depth[@]}" --chunk 64 \
      --cache-type f16 "${account[@]}" 2>&1 | grep -E '^(model|prompt|decode|kernel account)' | tee -a "$LOG" \
      | awk -v q="$q" -v r="$r" '/^prompt [0-9]+ tokens/ {print "dgr", q, "pp" $2, $7, r} /^decode B= 1 at depth/ {print "dgr", q, "depth", $7, r}' >> "$RES"
  done
done
for set in ${AMX_AB:-}; do
  q="${AMX_AB_QUANT:-Q4_K_M}"
  say "## dgr $q: AMX against VNNI for $set $(t)"
  off=(); [ "$set" = all ] || off=(--amx-off "$set")
  taskset -c "$CPUS" "${JAVA[@]}" "$MODELS/$q.gguf" --threads 2 --batches 1 --steps 4 --steady 0 --prompts "$PROMPTS" --chunk 64 \
    --cache-type f16 --amx-ab "${AMX_AB_ROUNDS:-5}" "${off[@]}" 2>&1 | grep -E '^(model|prompt [0-9]+ tokens)' | tee -a "$LOG" || true
done
# The median of a column of numbers, "-" for none.
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
say "# medians over $ROUNDS rounds (tok/s), llama.cpp / dgr = the ratio of the medians; then the median of the rounds' ratios $(t)"
for q in $QUANTS; do
  for w in $(awk -v q="$q" '$2 == q {print $3}' "$RES" | sort -u); do
    l=$(awk -v q="$q" -v w="$w" '$1 == "llama.cpp" && $2 == q && $3 == w {print $4}' "$RES" | median)
    d=$(awk -v q="$q" -v w="$w" '$1 == "dgr" && $2 == q && $3 == w {print $4}' "$RES" | median)
    per=$(awk -v q="$q" -v w="$w" '$2 == q && $3 == w {x[$1, $5] = $4; r[$5] = 1}
      END {for (k in r) if (x["llama.cpp", k] > 0 && x["dgr", k] > 0) print x["dgr", k] / x["llama.cpp", k]}' "$RES" | median)
    say "$q $w: $l / $d = $(awk -v l="$l" -v d="$d" 'BEGIN {if (l + 0 > 0 && d + 0 > 0) printf "%.2fx", d / l; else print "-"}'); median of ratios $(awk -v p="$per" 'BEGIN {if (p + 0 > 0) printf "%.2fx", p; else print "-"}')"
  done
done
