#!/usr/bin/env node
// Cross-checks dgr against real llama.cpp (node-llama-cpp's prebuilt CPU binaries).
//
// For one GGUF file it reports: whether llama.cpp loads it, llama.cpp's tokenization of
// each --text, llama.cpp's greedy continuation of a --tokens prompt (with the top-1/top-2
// logit margin at every step), and batch-1 / batched decode speed. Given --dgr it runs the
// same queries through the dgr CLI and reports agreement, the first divergence of the greedy
// continuations and a teacher-forced logit comparison along dgr's path.
//
// node-llama-cpp exposes no raw logits, but with temperature 0 its sampler chain is just
// "greedy" and the probability map it returns is softmax(raw logits) over the whole vocab,
// so ln(p_i / p_j) recovers logit_i - logit_j exactly enough for a cross-check (the absolute
// offset of the logits is lost; every comparison below is shift-invariant).
//
// Run `node compare.mjs --help` for the options.

import {execFileSync} from "node:child_process";
import {readFileSync, writeFileSync} from "node:fs";
import os from "node:os";
import {performance} from "node:perf_hooks";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const USAGE = `usage: node compare.mjs -m MODEL.gguf [options]
  --text T            tokenize T (repeatable)
  --special           parse special-token text (e.g. "<s>") inside --text as special tokens
  --tokens 1,2,3      prompt token ids (fed as-is, no BOS added) for the greedy check
  -n N                greedy tokens to generate (default 16)
  --top K             ids compared per position in the logit check (default 5)
  --tf-chunk N        feed the teacher-forced sequence to llama.cpp N tokens per decode
                      (default 0 = all at once; 1 = the incremental decode path)
  --no-tf             skip the teacher-forced logit check (it holds every position's
                      logits in memory: thousands of positions exhaust node's heap)
  -t, --threads N     llama.cpp threads (default 2)
  --ctx N             context size (default 512)
  --kv TYPE           llama.cpp's K/V cache type, for the checks and --bench (default F16, llama.cpp's)
  --bench N           decode N tokens at batch 1 and report tok/s
  --prompt-len L      bench only, on a prompt of L synthetic ids (100 + 31p mod 1000, as dgr's
                      DecodeBench feeds): its prefill time gives prompt tok/s, decode runs at depth L
  --bench-reps R      repeat the batch-1 benchmark R times (default 1)
  --bench-seqs S      also decode S sequences in parallel, N tokens each
  --dgr "CMD"         dgr launcher (e.g. "./dgr"); enables the dgr-side comparison
  --dgr-threads N     threads for dgr (default: same as --threads)
  --dgr-engine E      dgr's --engine for run and logits (simd, q8, scalar; default: dgr's own)
  --json FILE         also write every result as JSON to FILE`;

function parseArgs(argv) {
    const o = {texts: [], special: false, n: 16, top: 5, tfChunk: 0, threads: 2, ctx: 512, bench: 0, benchReps: 1, benchSeqs: 0};
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`missing value for ${a}`);
            return argv[++i];
        };
        switch (a) {
            case "-m": case "--model": o.model = next(); break;
            case "--text": o.texts.push(next()); break;
            case "--special": o.special = true; break;
            case "--tokens": o.tokens = parseIds(next()); break;
            case "-n": o.n = Number(next()); break;
            case "--top": o.top = Number(next()); break;
            case "--tf-chunk": o.tfChunk = Number(next()); break;
            case "-t": case "--threads": o.threads = Number(next()); break;
            case "--ctx": o.ctx = Number(next()); break;
            case "--kv": o.kv = next().toUpperCase(); break;
            case "--no-tf": o.noTf = true; break;
            case "--bench": o.bench = Number(next()); break;
            case "--prompt-len": o.promptLen = Number(next()); break;
            case "--bench-reps": o.benchReps = Number(next()); break;
            case "--bench-seqs": o.benchSeqs = Number(next()); break;
            case "--dgr": o.dgr = next().split(/\s+/).filter(Boolean); break;
            case "--dgr-threads": o.dgrThreads = Number(next()); break;
            case "--dgr-engine": o.dgrEngine = next(); break;
            case "--json": o.json = next(); break;
            case "-h": case "--help": console.log(USAGE); process.exit(0);
            default: throw new Error(`unknown argument ${a}\n${USAGE}`);
        }
    }
    if (!o.model) throw new Error(`-m MODEL is required\n${USAGE}`);
    o.dgrThreads ??= o.threads;
    return o;
}

function parseIds(s) {
    const ids = s.trim().split(/[\s,]+/).filter(Boolean).map(Number);
    if (ids.some(x => !Number.isInteger(x) || x < 0)) throw new Error(`bad token ids: ${s}`);
    return ids;
}

// One load-average reading goes next to every speed figure: the build machine is shared,
// so a tok/s figure without it cannot be interpreted.
function loadAvg() {
    return os.loadavg().map(x => x.toFixed(2)).join(" ");
}

function dgr(opts, args) {
    const [cmd, ...pre] = opts.dgr;
    return execFileSync(cmd, [...pre, ...args], {encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 26});
}

function engineArgs(opts) {
    return opts.dgrEngine ? ["--engine", opts.dgrEngine] : [];
}

function sameIds(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
}

function firstDifference(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
    return a.length === b.length ? -1 : n;
}

// Logit differences relative to a reference id, recovered from softmax probabilities.
function relativeLogits(probabilities, refId, ids) {
    const pRef = probabilities.get(refId) ?? 0;
    return ids.map(id => Math.log(probabilities.get(id) ?? 0) - Math.log(pRef));
}

// The top two entries of a probability map sorted highest first: the greedy pick and how
// far ahead of the runner-up it is in logit units (small margins are where two correct
// implementations with different rounding may legitimately pick differently).
function topTwo(probabilities) {
    const it = probabilities.entries();
    const [id1, p1] = it.next().value;
    const second = it.next().value;
    return {id: id1, margin: second ? Math.log(p1) - Math.log(second[1]) : Infinity, runnerUp: second?.[0]};
}

async function loadModel(llama, opts, report) {
    const t0 = performance.now();
    try {
        const model = await llama.loadModel({modelPath: opts.model, gpuLayers: 0});
        const info = {
            ok: true,
            ms: Math.round(performance.now() - t0),
            arch: model.fileInfo.metadata?.general?.architecture,
            type: model.typeDescription,
            vocabType: model.vocabularyType,
            bos: model.tokens.bos,
            eos: model.tokens.eos,
            addBos: model.tokens.shouldPrependBosToken,
            trainContext: model.trainContextSize,
            bytes: model.size
        };
        report.load = info;
        console.log(`load OK in ${info.ms} ms: arch=${info.arch} type="${info.type}" vocab=${info.vocabType} ` +
            `bos=${info.bos} eos=${info.eos} add_bos=${info.addBos} n_ctx_train=${info.trainContext}`);
        return model;
    } catch (e) {
        report.load = {ok: false, error: String(e?.message ?? e)};
        console.log(`load FAILED: ${report.load.error}`);
        return null;
    }
}

function tokenizeTexts(model, opts, report) {
    report.tokenize = [];
    for (const text of opts.texts) {
        // No BOS: what llama_tokenize does with add_special=false (the SPM space prefix is still
        // applied); special-token text is parsed only with --special.
        const ids = [...model.tokenize(text, opts.special)];
        const flags = opts.special ? ["--special"] : [];
        const entry = {text, llamacpp: ids};
        let line = `tokenize ${JSON.stringify(text)}: [${ids.join(" ")}]`;
        if (opts.dgr) {
            const mine = parseIds(dgr(opts, ["tokenize", "-m", opts.model, "--no-bos", ...flags, text]));
            entry.dgr = mine;
            entry.agree = sameIds(ids, mine);
            line += entry.agree ? "  dgr: AGREE" : `  dgr: DIFFER at ${firstDifference(ids, mine)}: [${mine.join(" ")}]`;
            // BOS policy: dgr's default tokenize must add BOS exactly when llama.cpp would.
            const withBos = parseIds(dgr(opts, ["tokenize", "-m", opts.model, ...flags, text]));
            const expected = model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos, ...ids] : ids;
            entry.bosAgree = sameIds(expected, withBos);
            if (!entry.bosAgree) line += `  BOS policy DIFFERS: dgr default gives [${withBos.join(" ")}]`;
        }
        report.tokenize.push(entry);
        console.log(line);
    }
}

function greedyStep(withProbabilities) {
    return {generateNext: {token: true, probabilities: withProbabilities, options: {temperature: 0}}};
}

// Greedy continuation: the prompt in one decode, then one token per decode (the batch-1 path
// a user sees).
async function greedy(model, opts, report) {
    const ctx = await newContext(model, opts);
    let dgrTokens = null;
    try {
        const seq = ctx.getSequence();
        const prompt = opts.tokens;
        const out = [];
        const margins = [];
        let input = prompt.map((t, i) => i === prompt.length - 1 ? [t, greedyStep(true)] : t);
        for (let k = 0; k < opts.n; k++) {
            const res = await seq.controlledEvaluate(input);
            const next = res[input.length - 1].next;
            const best = topTwo(next.probabilities);
            out.push(next.token);
            margins.push(best.margin);
            input = [[next.token, greedyStep(true)]];
        }
        report.greedy = {prompt, llamacpp: out, margins};
        console.log(`greedy prompt=[${prompt.join(",")}]`);
        console.log(`  llama.cpp -> ${out.join(" ")}`);
        console.log(`  top1-top2 margins: ${margins.map(m => m.toFixed(4)).join(" ")}`);
        if (opts.dgr) {
            const mine = parseIds(dgr(opts, ["run", "-m", opts.model, "--tokens", prompt.join(","), "-n", String(opts.n),
                "--temp", "0", "--ids", "--ignore-eos", "-t", String(opts.dgrThreads), "-c", String(opts.ctx), ...engineArgs(opts)]).split("\n")[0]);
            const at = firstDifference(out, mine);
            report.greedy.dgr = mine;
            report.greedy.firstDivergence = at;
            console.log(`  dgr       -> ${mine.join(" ")}`);
            console.log(at < 0 ? `  greedy: AGREE on all ${out.length} tokens`
                : `  greedy: first divergence at generated token ${at} (llama.cpp margin there ${margins[at]?.toFixed(4)})`);
            dgrTokens = mine;
        }
    } finally {
        await ctx.dispose();
    }
    if (dgrTokens && !opts.noTf) await teacherForced(model, opts, opts.tokens, dgrTokens, report);
}

// A fresh single-sequence context per check: dgr's CLI runs one sequence from an empty cache,
// and state left by an earlier check must not be what the comparison measures.
function newContext(model, opts) {
    return model.createContext({contextSize: opts.ctx, sequences: 1, threads: {ideal: opts.threads, min: opts.threads}, ...kvTypes(opts)});
}

// --kv as node-llama-cpp's context options (none: llama.cpp's default, F16).
function kvTypes(opts) {
    return opts.kv ? {experimentalKvCacheKeyType: opts.kv, experimentalKvCacheValueType: opts.kv} : {};
}

// Feeds prompt + dgr's own greedy tokens to both engines and compares the next-token logits
// at every position, so one early near-tie does not hide how close the rest of the run is.
async function teacherForced(model, opts, prompt, dgrTokens, report) {
    const seqIds = [...prompt, ...dgrTokens.slice(0, -1)];
    const ctx = await newContext(model, opts);
    const seq = ctx.getSequence();
    // Prefill (many tokens per decode) and incremental decode are different code paths in
    // llama.cpp (and in dgr), so the chunk size is a knob rather than a fixed choice.
    const chunk = opts.tfChunk > 0 ? opts.tfChunk : seqIds.length;
    const res = [];
    for (let at = 0; at < seqIds.length; at += chunk)
        res.push(...await seq.controlledEvaluate(seqIds.slice(at, at + chunk).map(t => [t, greedyStep(true)])));
    const mine = JSON.parse(dgr(opts, ["logits", "-m", opts.model, "--tokens", seqIds.join(","), "--top", String(opts.top),
        "-t", String(opts.dgrThreads), "-c", String(opts.ctx), ...engineArgs(opts)])).positions;
    const rows = [];
    for (let pos = 0; pos < seqIds.length; pos++) {
        const probs = res[pos].next.probabilities;
        const top = mine[pos].top; // [[id, logit], ...] highest first
        const ref = top[0][0];
        const ids = top.map(([id]) => id);
        const theirs = relativeLogits(probs, ref, ids);
        const ours = top.map(([, l]) => l - top[0][1]);
        const maxAbs = Math.max(...ids.map((_, i) => Math.abs(theirs[i] - ours[i])));
        const lc = topTwo(probs);
        const dgrMargin = top.length > 1 ? top[0][1] - top[1][1] : Infinity;
        rows.push({pos, argmaxAgree: lc.id === ref, llamacppTop: lc.id, dgrTop: ref, maxAbsRelLogitDiff: maxAbs,
            llamacppMargin: lc.margin, dgrMargin});
    }
    const agree = rows.filter(r => r.argmaxAgree).length;
    const worst = Math.max(...rows.map(r => r.maxAbsRelLogitDiff));
    report.teacherForced = {chunk, positions: rows.length, argmaxAgree: agree, maxAbsRelLogitDiff: worst, rows};
    console.log(`logits (teacher-forced on dgr's path, ${rows.length} positions, llama.cpp ${chunk} tok/decode, dgr top-${opts.top} ids): ` +
        `argmax agrees at ${agree}/${rows.length}, max |Δ(logit_i - logit_top)| = ${worst.toFixed(5)}`);
    for (const r of rows.filter(r => !r.argmaxAgree))
        console.log(`  pos ${r.pos}: llama.cpp top ${r.llamacppTop} (margin ${r.llamacppMargin.toFixed(4)}), ` +
            `dgr top ${r.dgrTop} (margin ${r.dgrMargin.toFixed(4)}), max rel-logit diff ${r.maxAbsRelLogitDiff.toFixed(5)}`);
    await ctx.dispose();
}

// Decodes n tokens on one sequence; the first token (prompt prefill + first sample) is timed
// separately so the tok/s figure is pure batch-1 decode.
async function decodeRun(seq, prompt, n) {
    const t0 = performance.now();
    let t1 = 0;
    let count = 0;
    for await (const _ of seq.evaluate(prompt, {temperature: 0})) {
        if (count === 0) t1 = performance.now();
        if (++count > n) break;
    }
    const t2 = performance.now();
    return {prefillMs: t1 - t0, decodeMs: t2 - t1, decoded: count - 1};
}

async function bench(model, opts, report) {
    const prompt = opts.tokens ?? [model.tokens.bos ?? 0];
    const contextSize = prompt.length + opts.bench + 8;
    report.bench = {threads: opts.threads, tokens: opts.bench, batch1: []};
    const ctx = await model.createContext({contextSize, threads: {ideal: opts.threads, min: opts.threads}, ...kvTypes(opts)});
    try {
        for (let r = 0; r < opts.benchReps; r++) {
            const seq = ctx.getSequence();
            const before = loadAvg();
            const run = await decodeRun(seq, prompt, opts.bench);
            const tps = run.decoded / (run.decodeMs / 1000);
            const entry = {tokPerS: tps, decoded: run.decoded, decodeMs: run.decodeMs, prefillMs: run.prefillMs,
                loadAvgBefore: before, loadAvgAfter: loadAvg()};
            report.bench.batch1.push(entry);
            console.log(`bench batch=1 threads=${opts.threads}: ${run.decoded} tokens in ${run.decodeMs.toFixed(0)} ms = ` +
                `${tps.toFixed(2)} tok/s (prompt ${prompt.length} tok + first token ${run.prefillMs.toFixed(0)} ms = ` +
                `${(prompt.length / (run.prefillMs / 1000)).toFixed(1)} prompt tok/s) ` +
                `[loadavg before ${before}, after ${entry.loadAvgAfter}]`);
            seq.dispose();
        }
    } finally {
        await ctx.dispose();
    }
    if (opts.benchSeqs > 1) {
        const s = opts.benchSeqs;
        const bctx = await model.createContext({contextSize: contextSize * s, sequences: s,
            threads: {ideal: opts.threads, min: opts.threads}, ...kvTypes(opts)});
        try {
            const seqs = Array.from({length: s}, () => bctx.getSequence());
            const before = loadAvg();
            const t0 = performance.now();
            // node-llama-cpp packs the concurrent single-token evaluations of all sequences into
            // one llama_decode per step, so this measures the batched decode path.
            const runs = await Promise.all(seqs.map(seq => decodeRun(seq, prompt, opts.bench)));
            const wall = performance.now() - t0;
            const decoded = runs.reduce((a, r) => a + r.decoded, 0);
            const decodeWall = wall - Math.max(...runs.map(r => r.prefillMs));
            const entry = {sequences: s, decoded, wallMs: wall, tokPerS: decoded / (decodeWall / 1000),
                loadAvgBefore: before, loadAvgAfter: loadAvg()};
            report.bench.batched = entry;
            console.log(`bench batch=${s} threads=${opts.threads}: ${decoded} tokens, ${entry.tokPerS.toFixed(2)} tok/s aggregate ` +
                `(${(entry.tokPerS / s).toFixed(2)} per sequence) [loadavg before ${before}, after ${entry.loadAvgAfter}]`);
        } finally {
            await bctx.dispose();
        }
    }
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const report = {model: opts.model};
    const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error, maxThreads: opts.threads});
    // The release tag node-llama-cpp reports is its own binaries' tag, not a llama.cpp build
    // number, so the package version is printed too.
    const nlcVersion = JSON.parse(readFileSync(new URL("../package.json", import.meta.resolve("node-llama-cpp")), "utf8")).version;
    report.llamacpp = {nodeLlamaCpp: nlcVersion, release: llama.llamaCppRelease, build: llama.buildType,
        cpu: llama.systemInfo.trim()};
    console.log(`node-llama-cpp ${nlcVersion}, llama.cpp tag ${llama.llamaCppRelease.release} ` +
        `(${llama.buildType}, gpu=${llama.gpu}) ${report.llamacpp.cpu}`);
    const model = await loadModel(llama, opts, report);
    let exit = 0;
    if (model) {
        if (opts.texts.length) tokenizeTexts(model, opts, report);
        if (opts.promptLen) opts.tokens = Array.from({length: opts.promptLen}, (_, p) => 100 + (p * 31) % 1000);
        else if (opts.tokens) await greedy(model, opts, report);
        if (opts.bench > 0) await bench(model, opts, report);
        await model.dispose();
    } else {
        exit = 2;
    }
    if (opts.json) {
        writeFileSync(opts.json, JSON.stringify(report, null, 2));
    }
    await llama.dispose();
    process.exit(exit);
}

main().catch(e => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
});
