#!/usr/bin/env bash
# compare-llamacpp.sh: dgr against llama.cpp on the same file, same threads, same hour (issue 26's table).
# Usage: tools/speed/compare-llamacpp.sh [--quant Q4_0|Q4_K_M|...] [--cache-type f16|f32|bf16|q8_0] [MODEL.gguf] [THREADS]
#   MODEL defaults to /tmp/models/llama-1b-QUANT.gguf (QUANT defaults to Q4_0), made by
#   `./dgr synth --preset llama-1b --quant QUANT` when missing.
# Needs tools/llamacpp/node_modules (see tools/llamacpp/README.md; LLAMACPP_DIR overrides where it lives).
# Prints one line per figure: "<side> prompt <L> <tok/s>" and "<side> decode depth <L> <tok/s>", each with
# the load average, so a figure taken on a busy machine can be seen as such, then the ratios dgr / llama.cpp.
# --cache-type (default f16, llama.cpp's default) is the K/V cache type of both sides (K and V alike); every line
# ends with it ("[cache f16]"), after the fields the ratios read.
# Runs about 4 minutes per file and round (run it once per --quant). ROUNDS=N (default 1) alternates the two sides
# N times, llama.cpp then dgr, and takes each figure's median over the rounds: on a host whose speed changes from
# minute to minute one round's ratio moves both ways (docs/engine.md, 2026-12-03). PROMPTS (default 128,1024,4096) and DEPTHS (default
# 4096) choose the lengths; CHUNK (default 64, the scheduler's default batch) the prompt rows per forward.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
QUANT=Q4_0
CACHE=f16
while [ $# -gt 0 ]; do
  case "$1" in
    --quant) QUANT="$2"; shift 2 ;;
    --cache-type) CACHE="$2"; shift 2 ;;
    *) break ;;
  esac
done
case "$CACHE" in f32|f16|bf16|q8_0) ;; *) echo "--cache-type must be one of f32, f16, bf16, q8_0, not '$CACHE'" >&2; exit 2 ;; esac
MODEL="${1:-/tmp/models/llama-1b-$QUANT.gguf}"
THREADS="${2:-2}"
LLAMACPP_DIR="${LLAMACPP_DIR:-$ROOT/tools/llamacpp}"
PROMPTS="${PROMPTS:-128,1024,4096}"
DEPTHS="${DEPTHS:-4096}"
CHUNK="${CHUNK:-64}"
ROUNDS="${ROUNDS:-1}"
mkdir -p "$(dirname "$MODEL")"
[ -f "$MODEL" ] || "$ROOT/dgr" synth --preset llama-1b --quant "$QUANT" -o "$MODEL"
load() { cut -d' ' -f1-3 /proc/loadavg; }
OUT="$(mktemp)"
# This checkout's compare.mjs (it passes --kv to the bench), run beside LLAMACPP_DIR's node_modules.
JS="$(mktemp -d)"; trap 'rm -rf "$OUT" "$JS"' EXIT
cp "$ROOT/tools/llamacpp/compare.mjs" "$JS/" && ln -s "$LLAMACPP_DIR/node_modules" "$JS/node_modules"

echo "# model $MODEL, $THREADS threads, $(nproc) cpus, cache $CACHE, rounds $ROUNDS, $(date -u +%FT%TZ)"
CP="engine/target/classes:gguf/target/classes"
(cd "$ROOT" && { [ -d engine/target/classes ] || mvn -B -q -pl engine -am install -DskipTests >/dev/null; })
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
for ((round = 1; round <= ROUNDS; round++)); do
  [ "$ROUNDS" -gt 1 ] && echo "# round $round of $ROUNDS [load $(load)]"
  for L in $(tr ',' '\n' <<<"$PROMPTS,$DEPTHS" | sort -nu); do
    out="$(cd "$JS" && node compare.mjs -m "$MODEL" -t "$THREADS" --ctx $((L + 64)) --bench 16 --prompt-len "$L" --no-tf --kv "$CACHE" 2>&1 | grep '^bench batch=1' || true)"
    pp="$(sed -n 's/.*= \([0-9.]*\) prompt tok\/s.*/\1/p' <<<"$out")"
    tg="$(sed -n 's/.*tokens in [0-9]* ms = \([0-9.]*\) tok\/s.*/\1/p' <<<"$out")"
    echo "llama.cpp prompt $L ${pp:-?} tok/s; decode depth $L ${tg:-?} tok/s [load $(load)] [cache $CACHE]" | tee -a "$OUT"
  done
  (cd "$ROOT" && "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
    -XX:ObjectAlignmentInBytes=32 -cp "$CP" dgr.engine.llama.DecodeBench "$MODEL" --threads "$THREADS" \
    --prompts "$PROMPTS" --depths "$DEPTHS" --chunk "$CHUNK" --batches 1 --steps 16 --steady 0 --cache-type "$CACHE" 2>&1) \
    | grep -v '^WARNING' | sed "s/^/dgr /; /^dgr \(prompt\|decode\)/s/\$/ [cache $CACHE]/" | tee -a "$OUT"
done
# Ratios: dgr's wall-clock rate over llama.cpp's at each length, each side's median over the rounds.
awk -v cache="$CACHE" -v rounds="$ROUNDS" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  /^llama.cpp prompt/ { if ($4 != "?") lp[$3] = lp[$3] " " $4; if ($9 != "?") ld[$3] = ld[$3] " " $9 }
  /^dgr prompt/ { dp[$3] = dp[$3] " " $8 }
  /^dgr decode B= 1 at depth/ { d = $7; sub(":", "", d); dd[d] = dd[d] " " $8 }
  END {
    of = rounds > 1 ? " (medians of " rounds " rounds)" : ""
    for (L in dp) if (L in lp) printf "ratio prompt %s: dgr %.1f / llama.cpp %.1f = %.2fx (goal 1.5x)%s [cache %s]\n", L, median(dp[L]), median(lp[L]), median(dp[L]) / median(lp[L]), of, cache
    for (L in dd) if (L in ld) printf "ratio decode depth %s: dgr %.1f / llama.cpp %.1f = %.2fx (goal 2x at 4096)%s [cache %s]\n", L, median(dd[L]), median(ld[L]), median(dd[L]) / median(ld[L]), of, cache
  }' "$OUT" | sort -k2,3
echo "# done [load $(load)]"
