#!/usr/bin/env node
// llama.cpp's context shift through node-llama-cpp (the copy in
// $MEMVANTA_REF, prebuilt CPU binaries, never built or downloaded): greedy
// generation of N tokens after the prompt ids, in a context of CTX, where a
// full sequence (CTX-1 tokens: node-llama-cpp's and llama-server's rule)
// erases tokens [KEEP, KEEP + (CTX-1-KEEP)/2) (llama_memory_seq_rm, then
// llama_memory_seq_add: llama.cpp's K-shift re-rotates the later keys).
// KVT=F32|F16|Q8_0 sets the cache type (default F16). Prints one JSON
// document: {"tokens": [...], "shifts": n, "ctx": CTX}.
//
//   node scripts/ctxshift-ref.mjs MODEL.gguf PROMPT_IDS_JSON CTX KEEP N
//
// scripts/ctxshift-ref.sh compares it with memvanta generate --context-shift.

import path from "node:path";

const ref = process.env.MEMVANTA_REF;
if (!ref) {
    process.stderr.write("ctxshift-ref.mjs: MEMVANTA_REF is not set (eval \"$(cat /tmp/llama-tools.env)\")\n");
    process.exit(2);
}
const {getLlama, LlamaLogLevel} = await import(path.join(ref, "node_modules/node-llama-cpp/dist/index.js"));
const [modelPath, promptJSON, ctxS, keepS, nS] = process.argv.slice(2);
if (nS == null) {
    process.stderr.write("usage: node scripts/ctxshift-ref.mjs MODEL.gguf PROMPT_IDS_JSON CTX KEEP N\n");
    process.exit(2);
}
const ctx = Number(ctxS), keep = Number(keepS), n = Number(nS);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
    progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 1});
const model = await llama.loadModel({modelPath: path.resolve(modelPath), gpuLayers: 0});
const kvt = process.env.KVT;
const context = await model.createContext({contextSize: ctx, batchSize: ctx, sequences: 1,
    threads: {ideal: 1, min: 1}, flashAttention: false,
    ...(kvt ? {experimentalKvCacheKeyType: kvt, experimentalKvCacheValueType: kvt} : {})});
if (context.contextSize !== ctx) throw new Error(`llama.cpp made a context of ${context.contextSize}, asked ${ctx} (its minimum is 256)`);
let shifts = 0;
const seq = context.getSequence({contextShift: {strategy: ({sequence}) => {
    shifts++;
    const d = Math.floor((sequence.nextTokenIndex - keep) / 2);
    return [{start: keep, end: keep + d}];
}}});
const out = [];
for await (const t of seq.evaluate(JSON.parse(promptJSON), {temperature: 0, yieldEogToken: true})) {
    out.push(t);
    if (out.length >= n) break;
}
process.stdout.write(JSON.stringify({tokens: out, shifts, ctx: context.contextSize}) + "\n");
await context.dispose();
await model.dispose();
