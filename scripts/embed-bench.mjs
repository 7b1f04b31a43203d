// Times llama.cpp (node-llama-cpp embedding context) embedding the texts of a
// JSON array one after another, as scripts/embed-bench.sh compares with
// memvanta embed: node scripts/embed-bench.mjs MODEL.gguf TEXTS.json
import fs from "node:fs";
import path from "node:path";
const refDir = process.env.MEMVANTA_REF ?? "/work/ref";
const {getLlama, LlamaLogLevel} = await import(path.join(refDir, "node_modules/node-llama-cpp/dist/index.js"));
const [modelPath, textsPath] = process.argv.slice(2);
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));
const llama = await getLlama({build: "never", skipDownload: true, gpu: false, logLevel: LlamaLogLevel.error, logger() {}});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const ctx = await model.createEmbeddingContext({contextSize: 1024, batchSize: 512, threads: 2});
let ntok = 0;
await ctx.getEmbeddingFor(texts[0]); // warm-up
const t0 = process.hrtime.bigint();
for (const t of texts) { const toks = model.tokenize(t); ntok += toks.length + 1; await ctx.getEmbeddingFor(toks); }
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({texts: texts.length, tokens: ntok, seconds: s, emb_per_s: texts.length / s, tok_per_s: ntok / s}));
