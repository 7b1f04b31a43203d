// llama.cpp's continuous-batching figure for memvanta bench-serve to stand
// beside: K sequences in one llama.cpp context (node-llama-cpp batches the
// sequences' concurrent evaluations into one llama_decode per step), each
// with its own p-token prompt (BOS + seeded random ids) generating n tokens
// greedily; aggregate generated tok/s and time to first token, for every K
// in --seqs, K alternating within each of --rounds rounds, in one process
// (the model loaded once), with the per-round ratios against the first K.
//
//   node scripts/llama-batched.mjs MODEL.gguf [--seqs 1,8] [--rounds 3] [-n 128] [-p 32] [--threads 2]
//
// Needs the oracle's node-llama-cpp: MEMVANTA_REF (default /work/ref) is the
// directory holding its node_modules. Prints one JSON document on stdout.
import path from "node:path";
import {performance} from "node:perf_hooks";

const ref = process.env.MEMVANTA_REF || "/work/ref";
const {getLlama, LlamaLogLevel} = await import(path.join(ref, "node_modules/node-llama-cpp/dist/index.js"));

const args = process.argv.slice(2);
const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const modelPath = args.find((a, i) => !a.startsWith("-") && (i === 0 || !args[i - 1].startsWith("-")));
if (!modelPath) {
    process.stderr.write("usage: node scripts/llama-batched.mjs MODEL.gguf [--seqs 1,8] [--rounds 3] [-n 128] [-p 32] [--threads 2]\n");
    process.exit(2);
}
const seqsList = opt("--seqs", "1,8").split(",").map(Number);
const rounds = Number(opt("--rounds", "3"));
const n = Number(opt("-n", "128"));
const p = Number(opt("-p", "32"));
const threads = Number(opt("--threads", "2"));
if (seqsList.some((k) => !(k >= 1 && k <= 64)) || !(rounds >= 1) || !(n >= 1) || !(p >= 1) || !(threads >= 1)) {
    process.stderr.write("--seqs in [1, 64], --rounds, -n, -p, --threads >= 1\n");
    process.exit(2);
}

const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
    progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: threads});
const model = await llama.loadModel({modelPath: path.resolve(modelPath), gpuLayers: 0, useMmap: true});
const nVocab = model.fileInsights?.vocabularySize ?? model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length ?? 32000;

function mulberry32(a) {
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

async function run(k) {
    const context = await model.createContext({contextSize: k * (p + n + 16), sequences: k,
        batchSize: Math.max(512, k), threads: {ideal: threads, min: threads}});
    const rand = mulberry32(1234);
    const prompts = [];
    for (let i = 0; i < k; i++) {
        const t = [model.tokens.bos];
        while (t.length < p) t.push(Math.floor(rand() * nVocab));
        prompts.push(t);
    }
    const seqs = [];
    for (let i = 0; i < k; i++) seqs.push(context.getSequence());
    const ttft = new Array(k).fill(0);
    const t0 = performance.now();
    await Promise.all(seqs.map(async (seq, i) => {
        let done = 0;
        for await (const _ of seq.evaluate(prompts[i], {temperature: 0, yieldEogToken: true})) {
            if (done === 0) ttft[i] = (performance.now() - t0) / 1e3;
            if (++done >= n) break;
        }
        if (done !== n) throw new Error(`sequence ${i} produced ${done} tokens, wanted ${n}`);
    }));
    const wall = (performance.now() - t0) / 1e3;
    await context.dispose();
    ttft.sort((a, b) => a - b);
    return {seqs: k, generated: k * n, wall_seconds: wall, aggregate_tok_per_s: k * n / wall,
        ttft_p50_seconds: ttft[Math.floor((k - 1) / 2)], ttft_p99_seconds: ttft[Math.min(k - 1, Math.floor(k * 0.99))]};
}

const median = (v) => {
    const s = [...v].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
await run(seqsList[0]); // warm-up: faults the weights in
const runs = [];
for (let r = 1; r <= rounds; r++) {
    for (const k of seqsList) {
        const res = {round: r, ...(await run(k))};
        runs.push(res);
        process.stderr.write(`round ${r}/${rounds}: ${k} sequences: ${res.aggregate_tok_per_s.toFixed(2)} tok/s aggregate, TTFT p50 ${res.ttft_p50_seconds.toFixed(3)} s p99 ${res.ttft_p99_seconds.toFixed(3)} s\n`);
    }
}
const summary = seqsList.filter((k, i) => seqsList.indexOf(k) === i).map((k) => {
    const rs = runs.filter((x) => x.seqs === k);
    const base = runs.filter((x) => x.seqs === seqsList[0]);
    const ratios = rs.map((x, i) => x.aggregate_tok_per_s / base[i].aggregate_tok_per_s);
    return {seqs: k, aggregate_tok_per_s_median: median(rs.map((x) => x.aggregate_tok_per_s)),
        ttft_p50_seconds_median: median(rs.map((x) => x.ttft_p50_seconds)),
        ratio_per_round: k === seqsList[0] ? undefined : ratios, ratio_median: k === seqsList[0] ? undefined : median(ratios)};
});
process.stdout.write(JSON.stringify({file: path.resolve(modelPath), threads, n, p, rounds, runs, summary,
    llama_cpp: "node-llama-cpp " + (llama.buildType ?? "") + " prebuilt, CPU"}, null, 2) + "\n");
await model.dispose();
