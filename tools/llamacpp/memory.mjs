// memory.mjs: llama.cpp's resident memory for a model file with a context of SESSIONS x TOKENS positions
// and a K/V cache type, through node-llama-cpp's prebuilt CPU binaries (what llama-server -c N -np S -ctk T -ctv T
// holds with flash attention, its CPU default and what a q8_0 V cache needs: llama.cpp allocates and clears the
// whole K/V cache when the context is made, so the figure is the same idle and with every session full). Run one
// type per process for figures that do not carry an earlier context's freed heap. Prints "llama.cpp <type> model-loaded <MB> context <MB> kv <MB>" per type.
// Usage: node memory.mjs MODEL.gguf [SESSIONS] [TOKENS] [THREADS] [TYPES (comma separated: f32,f16,bf16,q8_0)]
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import {readFileSync} from "node:fs";

const [model, sessions = "8", tokens = "2048", threads = "2", types = "f32,f16,bf16,q8_0"] = process.argv.slice(2);
if (!model) {
    console.error("usage: node memory.mjs MODEL.gguf [SESSIONS] [TOKENS] [THREADS] [TYPES]");
    process.exit(2);
}
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
const ggml = {f32: "F32", f16: "F16", bf16: "BF16", q8_0: "Q8_0"};

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error, maxThreads: Number(threads)});
const m = await llama.loadModel({modelPath: model, gpuLayers: 0, useMmap: true});
for (const t of types.split(",")) {
    if (!ggml[t]) throw new Error(`unknown cache type ${t}`);
    const before = rssMb();
    const ctx = await m.createContext({contextSize: Number(tokens), sequences: Number(sessions), // per sequence
        threads: {ideal: Number(threads), min: Number(threads)}, flashAttention: true,
        experimentalKvCacheKeyType: ggml[t], experimentalKvCacheValueType: ggml[t]});
    // One short evaluation so the compute buffers are in use, as a serving llama-server's are.
    const seq = ctx.getSequence();
    const it = seq.evaluate(m.tokenize("The quick brown fox"), {});
    await it.next();
    await it.return?.();
    const after = rssMb();
    console.log(`llama.cpp ${t} model-loaded ${before.toFixed(0)} MB, with ${sessions}x${tokens} context ${after.toFixed(0)} MB`
        + ` (context adds ${(after - before).toFixed(0)} MB)`);
    seq.dispose();
    await ctx.dispose();
}
await m.dispose();
await llama.dispose();
