// Produces golden tokenizer data from llama.cpp (via node-llama-cpp in the
// reference harness) for core/tokenizer's tests. Run by gen.sh:
//   node reftok.mjs MANIFEST.json TEXTS.json > golden.json
// MANIFEST: [{name, base, overrides, path}] where path is the GGUF to load
// (the base vocab with overrides applied by genvocab).
import fs from "node:fs";
import path from "node:path";

const refDir = process.env.REF_DIR ?? "/work/ref";
const {getLlama, LlamaLogLevel} = await import(path.join(refDir, "node_modules/node-llama-cpp/dist/index.js"));

const [manifestPath, textsPath] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));

const llama = await getLlama({build: "never", skipDownload: true, gpu: false, logLevel: LlamaLogLevel.error, logger() {}});
const out = {llama_cpp_release: llama.llamaCppRelease?.release, vocabs: []};
for (const v of manifest) {
    const model = await llama.loadModel({modelPath: path.resolve(v.path), vocabOnly: true, gpuLayers: 0});
    const n = model.tokens.length ?? model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const attrs = [];
    const eog = [];
    for (let t = 0; t < n; t++) {
        const a = model._model.getTokenAttributes(t);
        if (a !== 4) attrs.push([t, a]);
        if (model.isEogToken(t)) eog.push(t);
    }
    const cases = [];
    for (const text of texts) {
        for (const special of [false, true]) {
            const tokens = Array.from(model.tokenize(text, special));
            cases.push({
                text, special, tokens,
                detok: model.detokenize(tokens, false),
                detok_special: model.detokenize(tokens, true),
            });
        }
    }
    out.vocabs.push({
        name: v.name, base: v.base, overrides: v.overrides,
        bos: model.tokens.bos ?? -1, eos: model.tokens.eos ?? -1, eot: model.tokens.eot ?? -1,
        add_bos: model.tokens.shouldPrependBosToken, add_eos: model._model.shouldAppendEosToken(),
        attrs, eog, cases,
    });
    await model.dispose();
}
process.stdout.write(JSON.stringify(out, null, 0) + "\n");
