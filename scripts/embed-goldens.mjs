// Records llama.cpp's pooled embeddings (node-llama-cpp's embedding
// context: llama_get_embeddings_seq, not normalised) for texts on one GGUF,
// with the exact tokens llama.cpp evaluated, as JSON on stdout. Used by
// scripts/embed-golden.sh; REF_DIR is the ref harness (MEMVANTA_REF).
//   node scripts/embed-goldens.mjs MODEL.gguf TEXTS.json
import fs from "node:fs";
import path from "node:path";

const refDir = process.env.REF_DIR ?? process.env.MEMVANTA_REF ?? "/work/ref";
const {getLlama, LlamaLogLevel} = await import(path.join(refDir, "node_modules/node-llama-cpp/dist/index.js"));
const [modelPath, textsPath] = process.argv.slice(2);
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));

const llama = await getLlama({build: "never", skipDownload: true, gpu: false, logLevel: LlamaLogLevel.error, logger() {}});
const model = await llama.loadModel({modelPath: path.resolve(modelPath), gpuLayers: 0});
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
