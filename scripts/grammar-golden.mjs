// grammar-golden.mjs: llama.cpp's grammar-constrained greedy generation,
// through node-llama-cpp (LlamaGrammar), for the differential test of
// core/grammar (internal/realfiles/grammar_test.go). Run from a directory
// with node-llama-cpp installed ($MEMVANTA_REF, see scripts/llama-tools.sh):
//
//   cp scripts/grammar-golden.mjs "$MEMVANTA_REF/" &&
//   node "$MEMVANTA_REF/grammar-golden.mjs" MODEL.gguf CASES.json > GOLDEN.json
//
// CASES.json: [{"name", "prompt", "grammar" (GBNF), "n"}]. Output: the
// cases with llama.cpp's prompt tokens and generated tokens (greedy,
// temperature 0, no penalties, the grammar applied to every candidate,
// stopping at an end-of-generation token or after n tokens), and per step
// the 20 most likely tokens (as node-llama-cpp reports them) with their logit gaps, so a
// differing choice can be told to be a near-tie.
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import {getLlama, LlamaLogLevel, LlamaGrammar, LlamaGrammarEvaluationState} from "node-llama-cpp";

const [modelPath, casesPath] = process.argv.slice(2);
if (!modelPath || !casesPath) {
    console.error("usage: node grammar-golden.mjs MODEL.gguf CASES.json");
    process.exit(2);
}
const cases = JSON.parse(fs.readFileSync(casesPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath});
const out = [];
for (const c of cases) {
    const grammar = new LlamaGrammar(llama, {grammar: c.grammar});
    const prompt = model.tokenize(c.prompt, false, "trimLeadingSpace");
    const tokens = [model.tokens.bos, ...model.tokenize(c.prompt)];
    const context = await model.createContext({contextSize: 256, sequences: 1, threads: {ideal: 2, min: 2}});
    const seq = context.getSequence();
    const state = new LlamaGrammarEvaluationState({model, grammar});
    const gen = [];
    const top = []; // per step: the 20 most likely tokens as node-llama-cpp reports them, [id, logit - top logit]
    let eog = false;
    for await (const r of seq.evaluateWithMetadata(tokens, {probabilities: true},
        {temperature: 0, grammarEvaluationState: state, yieldEogToken: true})) {
        const t = r.token;
        const st = [];
        let p0 = 0;
        for (const [id, p] of r.probabilities) {
            if (st.length === 0) p0 = p;
            st.push([id, Math.round(Math.log(p / p0) * 1000) / 1000]);
            if (st.length >= 20) break;
        }
        if (model.isEogToken(t)) { eog = true; break; }
        gen.push(t);
        top.push(st);
        if (gen.length >= c.n) break;
    }
    await context.dispose();
    void prompt;
    out.push({...c, prompt_tokens: tokens, tokens: gen, text: model.detokenize(gen, false), eog, top});
}
const sha = crypto.createHash("sha256").update(fs.readFileSync(modelPath)).digest("hex");
console.log(JSON.stringify({file: path.basename(modelPath), model_sha256: sha,
    generator: "scripts/grammar-golden.mjs (node-llama-cpp LlamaGrammar, greedy)", cases: out}, null, 1));
await model.dispose();
