# Sourced by measure-v4.sh and v4-llamacpp.sh: dgr's side of the DeepSeek-V4 lane's figures, in one place.
# v4_decodebench JDK ROOT MODEL ENGINE THREADS runs DecodeBench (the engine alone, no HTTP) with ENGINE (q8 or simd):
# generation at batch 1 and aggregate at 8 sessions, each three times, and a 128-token prompt in one forward five
# times (about 0.1 s each); read the medians. 3,000 untimed batch-1 steps come first: on a model as small as
# dsv4-small the JIT is still compiling after 1,000 (AMD Zen 3, 2026-12-05: 256-step reads after 1,000 steps ran
# 364, 535, 582 and 635 tok/s, then 595-632), which read low by up to two fifths.
v4_decodebench() {
  "$1/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32 \
    -cp "$2/cli/target/lib/*" dgr.engine.llama.DecodeBench "$3" --"$4" --threads "$5" \
    --batches 1,1,1,8,8,8 --steps 128 --prompts 128,128,128,128,128 --chunk 128 --steady 0 --warmup 3000 2>&1
}
