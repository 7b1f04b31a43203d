// grammar-bench.mjs: llama.cpp's generation speed with and without a JSON
// Schema constraint on one file, through node-llama-cpp (its schema-to-GBNF
// converter, llama.cpp's grammar sampler), for the constrained-decoding
// comparison in docs/benchmarks.md. Run from a directory with node-llama-cpp
// installed ($MEMVANTA_REF, see scripts/llama-tools.sh):
//
//   cp scripts/grammar-bench.mjs "$MEMVANTA_REF/" &&
//   node "$MEMVANTA_REF/grammar-bench.mjs" MODEL.gguf SCHEMA.json [N] [ROUNDS]
//
// Each round generates N tokens greedily from the same prompt, free and
// then constrained (a fresh grammar state each time), 2 threads; prints one
// JSON object with the tokens per second of every run (generation only, the
// prompt's evaluation excluded).
import fs from "node:fs";
import {getLlama, LlamaLogLevel, LlamaGrammarEvaluationState} from "node-llama-cpp";

const [modelPath, schemaPath, nArg, roundsArg] = process.argv.slice(2);
if (!modelPath || !schemaPath) {
    console.error("usage: node grammar-bench.mjs MODEL.gguf SCHEMA.json [N] [ROUNDS]");
    process.exit(2);
}
const n = Number(nArg ?? 64), rounds = Number(roundsArg ?? 3);
const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath});
const grammar = await llama.createGrammarForJsonSchema(schema);
const prompt = [model.tokens.bos, ...model.tokenize("Write the order as JSON:")];

async function run(constrained) {
    const context = await model.createContext({contextSize: 512, sequences: 1, threads: {ideal: 2, min: 2}});
    const seq = context.getSequence();
    const opts = {temperature: 0};
    if (constrained) opts.grammarEvaluationState = new LlamaGrammarEvaluationState({model, grammar});
    let got = 0, t0 = 0;
    for await (const t of seq.evaluate(prompt, opts)) {
        if (got === 0) t0 = performance.now(); // the first token ends the prompt's evaluation
        got++;
        if (model.isEogToken(t) || got > n) break;
    }
    const ms = performance.now() - t0;
    await context.dispose();
    return {tokens: got - 1, tok_s: (got - 1) / (ms / 1000)};
}

const out = {file: modelPath, schema: schemaPath, n, free: [], constrained: []};
for (let r = 0; r < rounds; r++) {
    out.free.push(await run(false));
    out.constrained.push(await run(true));
    console.error(`round ${r + 1}: free ${out.free.at(-1).tok_s.toFixed(2)} tok/s, constrained ${out.constrained.at(-1).tok_s.toFixed(2)} tok/s (${out.constrained.at(-1).tokens} tokens)`);
}
console.log(JSON.stringify(out));
await model.dispose();
