#!/usr/bin/env node
// llama.cpp's speculative decoding through node-llama-cpp (the copy in
// $MEMVANTA_REF, prebuilt CPU binaries, never built or downloaded): greedy
// generation of -n tokens after a prompt, plain, with a draft model
// (DraftSequenceTokenPredictor) and with prompt lookup
// (InputLookupTokenPredictor), the three interleaved per repetition so
// their ratios come from one run. Prints one JSON document on stdout.
//
//   node scripts/spec-ref.mjs TARGET.gguf --prompt-file F -n N [--draft DRAFT.gguf]
//        [--draft-max 16] [--draft-min 0] [--draft-p-min 0.75] [--lookup-n 1..3]
//        [--threads 2] [--ctx C] [--reps 2]
//
// The draft predictor's minConfidence is llama.cpp's --draft-p-min; the
// lookup predictor looks up patterns of --lookup-min..--lookup-max tokens
// (node-llama-cpp's patternLength) and predicts up to --draft-max.
// node-llama-cpp's draft predictor drafts asynchronously beside the target
// (it hands over what it has drafted when the target asks), so it is not
// llama.cpp's llama-speculative loop; "validated"/"refuted" say how many
// drafted tokens the target checked.

import fs from "node:fs";
import path from "node:path";
import {performance} from "node:perf_hooks";

const ref = process.env.MEMVANTA_REF;
if (!ref) {
    process.stderr.write("spec-ref.mjs: MEMVANTA_REF is not set (eval \"$(cat /tmp/llama-tools.env)\")\n");
    process.exit(2);
}
const nlc = await import(path.join(ref, "node_modules/node-llama-cpp/dist/index.js"));
const {getLlama, LlamaLogLevel, DraftSequenceTokenPredictor, InputLookupTokenPredictor} = nlc;

const argv = process.argv.slice(2);
const opt = {};
const pos = [];
for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--") || argv[i] === "-n") opt[argv[i]] = argv[++i];
    else pos.push(argv[i]);
}
if (pos.length !== 1 || !opt["--prompt-file"] || !opt["-n"]) {
    process.stderr.write("usage: node scripts/spec-ref.mjs TARGET.gguf --prompt-file F -n N [--draft DRAFT.gguf] [--draft-max 16] [--draft-min 0] [--draft-p-min 0.75] [--lookup-min 1] [--lookup-max 3] [--threads 2] [--ctx C] [--reps 2]\n");
    process.exit(2);
}
const num = (k, d) => opt[k] != null ? Number(opt[k]) : d;
const n = num("-n", 128), threads = num("--threads", 2), reps = num("--reps", 2);
const draftMax = num("--draft-max", 16), draftMin = num("--draft-min", 0), pMin = num("--draft-p-min", 0.75);

const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
    progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: threads});
const load = (p) => llama.loadModel({modelPath: path.resolve(p), gpuLayers: 0, useMmap: true});
const target = await load(pos[0]);
const text = fs.readFileSync(opt["--prompt-file"], "utf8");
const prompt = target.tokenize(text);
if (target.tokens.bos != null && target.tokens.shouldPrependBosToken) prompt.unshift(target.tokens.bos);
const ctxSize = num("--ctx", prompt.length + n + draftMax + 16);
const mkContext = (m) => m.createContext({contextSize: ctxSize, batchSize: Math.min(512, ctxSize), sequences: 1,
    threads: {ideal: threads, min: threads}});

const modes = [{name: "plain", seq: (await mkContext(target)).getSequence()}];
if (opt["--draft"]) {
    const draft = await load(opt["--draft"]);
    const dseq = (await mkContext(draft)).getSequence();
    modes.push({name: "draft", seq: (await mkContext(target)).getSequence({
        tokenPredictor: new DraftSequenceTokenPredictor(dseq, {minTokens: draftMin, maxTokens: draftMax, minConfidence: pMin})})});
}
// The lookup predictor searches the input it is given (LlamaChat gives it
// the prompt), here the prompt tokens.
const lookup = new InputLookupTokenPredictor({patternLength: {min: num("--lookup-min", 1), max: num("--lookup-max", 3)},
    predictionLength: {min: 1, max: draftMax}});
lookup.updateInputTokens(prompt);
modes.push({name: "lookup", seq: (await mkContext(target)).getSequence({tokenPredictor: lookup})});

// One run: the prompt and the first token untimed, then n tokens timed.
async function run(seq) {
    await seq.clearHistory();
    const before = {...seq.tokenPredictions};
    const out = [];
    let t0 = 0;
    for await (const tok of seq.evaluate(prompt, {temperature: 0, yieldEogToken: true})) {
        if (out.length === 0) t0 = performance.now();
        out.push(tok);
        if (out.length > n) break;
    }
    const ms = performance.now() - t0;
    const after = seq.tokenPredictions;
    return {ms, tokens: out, validated: after.validated - before.validated, refuted: after.refuted - before.refuted};
}

const res = {};
for (const m of modes) res[m.name] = {tps: [], validated: 0, refuted: 0, tokens: null};
await run(modes[0].seq); // warm-up
for (let r = 0; r < reps; r++) {
    let line = `rep ${r + 1}/${reps}:`;
    for (const m of modes) {
        const o = await run(m.seq);
        const x = res[m.name];
        x.tps.push(n / o.ms * 1e3);
        x.validated += o.validated;
        x.refuted += o.refuted;
        x.tokens = o.tokens;
        line += ` ${m.name} ${x.tps.at(-1).toFixed(2)} t/s`;
    }
    process.stderr.write(line + "\n");
}
const plainToks = JSON.stringify(res.plain.tokens);
for (const m of modes) {
    const x = res[m.name];
    x.tps_mean = x.tps.reduce((a, b) => a + b, 0) / x.tps.length;
    x.ratio_vs_plain = x.tps_mean / (res.plain.tps.reduce((a, b) => a + b, 0) / res.plain.tps.length);
    x.same_tokens_as_plain = JSON.stringify(x.tokens) === plainToks;
    x.accept_rate = x.validated + x.refuted > 0 ? x.validated / (x.validated + x.refuted) : null;
    delete x.tokens;
}
process.stdout.write(JSON.stringify({target: pos[0], draft: opt["--draft"] ?? null, prompt_tokens: prompt.length, n, threads,
    draft_max: draftMax, draft_min: draftMin, draft_p_min: pMin, results: res}, null, 2) + "\n");
process.exit(0);
