#!/usr/bin/env node
// llama.cpp's pp/tg throughput after N tokens are already in the context,
// like llama-bench's -d (n_depth), through the node-llama-cpp install of the
// reference harness (../shared/ref, whose `ref.mjs bench` has no depth
// option; ../shared is read-only, so the option lives here).
//
//   node scripts/ref-bench.mjs REF_DIR MODEL.gguf [-p 512] [-n 128] [-d 0]
//        [-r 5] [-t 2] [-b B] [--fa auto|on|off] [-ctk TYPE] [-ctv TYPE] [--seed 1234] [--no-warmup]
//
// -ctk/-ctv are llama.cpp's KV cache types (f16, q8_0, q4_0, ...; ggml type
// names, case-insensitive), passed as node-llama-cpp's
// experimentalKvCacheKeyType/ValueType; a quantized V cache needs flash
// attention in llama.cpp.
//
// Method (as ref.mjs bench, plus the depth): a warm-up (one pp run and one
// 1-token tg run from an empty cache), then d random tokens (BOS first) are
// decoded once, untimed, in batches of -b. Every repetition then times pp
// (p random tokens as one evaluation after the d cached ones, logits for
// the last only) and tg (n single-token decodes with greedy picks after the
// d cached ones); after each test the cache is cut back to the d tokens, so
// every timed run starts from the same d-token context. llama-bench
// re-decodes the d tokens before every test instead; the timed work is the
// same and this costs one prefill per process rather than one per test.
// With -d 0 the tests run from an empty cache, exactly as ref.mjs bench.
//
// Prints one JSON document shaped like ref.mjs bench's (results keyed by
// test, each with llama_perf = llama.cpp's own llama_perf counters and wall
// = performance.now() around the call) plus "depth".
import path from "node:path";
import {performance} from "node:perf_hooks";

function usage(msg) {
    if (msg) process.stderr.write(`ref-bench.mjs: ${msg}\n`);
    process.stderr.write("usage: node scripts/ref-bench.mjs REF_DIR MODEL.gguf [-p 512] [-n 128] [-d 0] [-r 5] [-t 2] [-b B] [--fa auto|on|off] [-ctk TYPE] [-ctv TYPE] [--seed 1234] [--no-warmup]\n");
    process.exit(2);
}

const argv = process.argv.slice(2);
const pos = [];
const opt = {};
for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--no-warmup") opt[a] = true;
    else if (["-p", "-n", "-d", "-r", "-t", "-b", "--fa", "--seed", "-ctk", "-ctv"].includes(a)) {
        if (i + 1 >= argv.length) usage(`${a} needs a value`);
        opt[a] = argv[++i];
    } else if (a.startsWith("-")) usage(`unknown flag ${a}`);
    else pos.push(a);
}
if (pos.length !== 2) usage();
const [refDir, modelPath] = pos;
const int = (name, def, min) => {
    if (opt[name] == null) return def;
    const v = Number(opt[name]);
    if (!Number.isInteger(v) || v < min) usage(`${name} must be an integer >= ${min}`);
    return v;
};
const p = int("-p", 512, 0), n = int("-n", 128, 0), depth = int("-d", 0, 0), reps = int("-r", 5, 1);
const threads = int("-t", 2, 1), seed = int("--seed", 1234, 0);
const batch = int("-b", Math.max(1, Math.min(512, Math.max(p, depth))), 1);
const fa = {auto: "auto", on: true, off: false}[opt["--fa"] ?? "auto"];
if (fa === undefined) usage("--fa must be auto, on or off");

const {getLlama, LlamaLogLevel} = await import(path.join(path.resolve(refDir), "node_modules/node-llama-cpp/dist/index.js"));

// llama.cpp's log, kept to read the llama_perf lines printTimings emits.
const logText = [];
const logger = (level, message) => {
    logText.push(message);
    if (process.env.REF_BENCH_VERBOSE || level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) process.stderr.write(message.endsWith("\n") ? message : message + "\n");
};
function takePerf() {
    const lines = logText.map((m) => m.endsWith("\n") ? m : m + "\n").join("").split("\n");
    logText.length = 0;
    const out = {};
    for (const l of lines) {
        let m;
        if ((m = l.match(/prompt eval time =\s+([\d.]+) ms \/\s+(\d+) tokens/))) out.prompt = {ms: Number(m[1]), tokens: Number(m[2])};
        else if ((m = l.match(/\seval time =\s+([\d.]+) ms \/\s+(\d+) runs/))) out.eval = {ms: Number(m[1]), runs: Number(m[2])};
    }
    return out;
}

const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
    progressLogs: false, logLevel: LlamaLogLevel.log, logger, maxThreads: threads});
if (llama.gpu !== false) throw new Error(`expected CPU-only llama, got gpu=${llama.gpu}`);
const model = await llama.loadModel({modelPath: path.resolve(modelPath), gpuLayers: 0, useMmap: true, useMlock: false});
const context = await model.createContext({
    contextSize: depth + Math.max(p, n, 1), batchSize: batch, sequences: 1,
    threads: {ideal: threads, min: threads}, flashAttention: fa, performanceTracking: true,
    ...(opt["-ctk"] ? {experimentalKvCacheKeyType: opt["-ctk"].toUpperCase()} : {}),
    ...(opt["-ctv"] ? {experimentalKvCacheValueType: opt["-ctv"].toUpperCase()} : {}),
});
const seq = context.getSequence();
const nVocab = model.fileInsights?.vocabularySize ?? model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length ?? 32000;
const bos = model.tokens.bos != null && model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
let state = seed >>> 0; // mulberry32, as ref.mjs
const rand = () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const randToks = (count, start) => Array.from({length: count}, (_, i) => i === 0 && start && bos != null ? bos : Math.floor(rand() * nVocab));

// back cuts the cache to the first d tokens.
async function back(d) {
    if (d === 0) await seq.clearHistory();
    else if (seq.nextTokenIndex > d) await seq.eraseContextTokenRanges([{start: d, end: seq.nextTokenIndex}]);
}
async function runPP(d) {
    await back(d);
    const toks = randToks(p, d === 0);
    const input = toks.map((t, i) => i === toks.length - 1 ? [t, {generateNext: {token: true}}] : t);
    const t0 = performance.now();
    await seq.controlledEvaluate(input);
    return performance.now() - t0;
}
async function runTG(count, d) {
    await back(d);
    const first = d === 0 && bos != null ? bos : Math.floor(rand() * nVocab);
    let done = 0;
    const t0 = performance.now();
    for await (const _ of seq.evaluate([first], {temperature: 0, yieldEogToken: true})) {
        if (++done >= count) break;
    }
    const ms = performance.now() - t0;
    if (done !== count) throw new Error(`tg produced ${done} tokens, wanted ${count}`);
    return ms;
}

if (!opt["--no-warmup"]) {
    if (p > 0) await runPP(0);
    if (n > 0) await runTG(1, 0);
}
await seq.clearHistory();
if (depth > 0) {
    process.stderr.write(`ref-bench: prefilling ${depth} tokens...\n`);
    await seq.controlledEvaluate(randToks(depth, true));
    if (seq.nextTokenIndex !== depth) throw new Error(`depth prefill left ${seq.nextTokenIndex} tokens, wanted ${depth}`);
}
await context.printTimings();
takePerf(); // discard warm-up and prefill timings

const wall = {pp: [], tg: []}, perf = {pp: [], tg: []};
for (let r = 0; r < reps; r++) {
    let line = `ref-bench rep ${r + 1}/${reps}:`;
    if (p > 0) {
        wall.pp.push(await runPP(depth));
        await context.printTimings();
        const pf = takePerf();
        if (pf.prompt) perf.pp.push(pf.prompt.ms);
        line += ` pp${p}@d${depth} ${(p / wall.pp.at(-1) * 1e3).toFixed(2)} t/s`;
    }
    if (n > 0) {
        wall.tg.push(await runTG(n, depth));
        await context.printTimings();
        const pf = takePerf();
        if (pf.eval) perf.tg.push(pf.eval.ms);
        line += ` tg${n}@d${depth} ${(n / wall.tg.at(-1) * 1e3).toFixed(2)} t/s`;
    }
    process.stderr.write(line + "\n");
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const r3 = (x) => Math.round(x * 1000) / 1000;
const stat = (ms, count) => {
    if (ms.length === 0) return null;
    const tps = ms.map((v) => count / v * 1e3);
    const m = mean(tps);
    const sd = tps.length < 2 ? 0 : Math.sqrt(tps.reduce((a, b) => a + (b - m) ** 2, 0) / (tps.length - 1));
    return {tokens: count, tps_mean: r3(m), tps_stdev: r3(sd), ms: ms.map(r3)};
};
const out = {
    file: path.resolve(modelPath),
    depth,
    results: {
        [`pp${p}`]: p > 0 ? {wall: stat(wall.pp, p), llama_perf: stat(perf.pp, p)} : null,
        [`tg${n}`]: n > 0 ? {wall: stat(wall.tg, n), llama_perf: stat(perf.tg, n)} : null,
    },
    settings: {reps, depth, ctx: context.contextSize, batch: context.batchSize, threads: context.currentThreads,
        flash_attention: context.flashAttention, kv_cache_type: {k: context.kvCacheKeyType, v: context.kvCacheValueType}},
    llama_cpp_release: llama.llamaCppRelease?.release,
};
await context.dispose();
await model.dispose();
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
