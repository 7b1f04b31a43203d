// Records llama.cpp's pooled embeddings (node-llama-cpp's embedding
// context: llama_get_embeddings_seq, not normalised) for texts on one GGUF,
// with the exact tokens llama.cpp evaluated, as JSON on stdout. Used by
// scripts/embed-golden.sh; REF_DIR is the ref harness (MEMVANTA_REF).
//   node scripts/embed-goldens.mjs MODEL.gguf TEXTS.json [rank]
// With "rank" (a rank-pooled file with a classifier head) it records
// llama.cpp's ranking context instead: texts[0] is the query, each other
// text a document; each case holds the tokens llama.cpp evaluated for the
// pair and the score, the classifier's first output as llama-server's
// /rerank returns it (node-llama-cpp's rank() is its sigmoid, inverted
// here, except for qwen3, whose graph ends in a softmax).
import fs from "node:fs";
import path from "node:path";

const refDir = process.env.REF_DIR ?? process.env.MEMVANTA_REF ?? "/work/ref";
const {getLlama, LlamaLogLevel} = await import(path.join(refDir, "node_modules/node-llama-cpp/dist/index.js"));
const [modelPath, textsPath, mode] = process.argv.slice(2);
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));

const llama = await getLlama({build: "never", skipDownload: true, gpu: false, logLevel: LlamaLogLevel.error, logger() {}});
const model = await llama.loadModel({modelPath: path.resolve(modelPath), gpuLayers: 0});
if (mode === "rank") {
    const rctx = await model.createRankingContext({contextSize: 512, batchSize: 512, threads: 2});
    const [query, ...docs] = texts;
    const cases = [];
    for (const document of docs) {
        const q = Array.from(model.tokenize(query, false, "trimLeadingSpace"));
        const d = Array.from(model.tokenize(document, false, "trimLeadingSpace"));
        const tokens = rctx._getEvaluationInput(q, d);
        const p = await rctx.rank(query, document);
        // rank() returns the first output as is when llama.cpp's graph
        // already took a softmax (qwen3), else its sigmoid.
        const score = rctx._currentArchRankingAlreadyNormalized ? p : Math.log(p / (1 - p));
        cases.push({query, document, tokens: Array.from(tokens), probability: p, score});
    }
    process.stdout.write(JSON.stringify({llama_cpp_release: llama.llamaCppRelease?.release, cases}) + "\n");
    await rctx.dispose();
    await model.dispose();
    process.exit(0);
}
const ctx = await model.createEmbeddingContext({contextSize: 512, batchSize: 512, threads: 2});
const cases = [];
for (const text of texts) {
    const tokens = Array.from(model.tokenize(text, false));
    ctx._prepareInput(tokens); // the BOS/EOS/SEP getEmbeddingFor adds, made visible
    const e = await ctx.getEmbeddingFor(tokens);
    cases.push({text, tokens, embedding: Array.from(e.vector)});
}
process.stdout.write(JSON.stringify({llama_cpp_release: llama.llamaCppRelease?.release, cases}) + "\n");
await ctx.dispose();
await model.dispose();
