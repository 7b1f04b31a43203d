#!/usr/bin/env node
// Records llama.cpp's view of GGUF files as golden JSON for the Go tests
// (core/inspect/refmeta_test.go). Run through scripts/ref-meta.sh, which
// also makes the synthetic models.
//
//   node scripts/ref-meta.mjs REF_DIR OUT.json FILE.gguf [SYNTH_ARGS_JSON]
//
// Two independent views are recorded:
//   llama_cpp: what llama.cpp printed while loading (`node ref.mjs meta
//              --verbose`): its kv/tensor counts, every key with its type,
//              the architecture, and tensor type counts when the model loads
//              fully (vocab-only files fail after the metadata stage, so
//              they have no tensor_types).
//   gguf_js:   node-llama-cpp's JavaScript GGUF reader (readGgufFileInfo).
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const [refDir, outPath, file, synthArgs] = process.argv.slice(2);
if (!refDir || !outPath || !file) {
    process.stderr.write("usage: node ref-meta.mjs REF_DIR OUT.json FILE.gguf [SYNTH_ARGS_JSON]\n");
    process.exit(2);
}
const {readGgufFileInfo} = await import(path.join(path.resolve(refDir), "node_modules/node-llama-cpp/dist/index.js"));

const run = spawnSync("node", ["ref.mjs", "meta", path.resolve(file), "--verbose"], {cwd: refDir, encoding: "utf8", maxBuffer: 1 << 28});
const log = (run.stderr || "").split("\n");
const lc = {loaded: run.status === 0, kv: []};
for (const l of log) {
    let m;
    if ((m = l.match(/loaded meta data with (\d+) key-value pairs and (\d+) tensors .*\(version (GGUF V\d+)/))) {
        lc.kv_count = Number(m[1]);
        lc.tensor_count = Number(m[2]);
        lc.version = m[3];
    } else if ((m = l.match(/llama_model_loader: - kv\s+\d+:\s+(\S+)\s+(\S+)\s+=/))) {
        lc.kv.push({key: m[1], type: m[2]});
    } else if ((m = l.match(/^print_info: arch\s+=\s+(\S+)/))) {
        lc.architecture = m[1];
    } else if ((m = l.match(/^llama_model_loader: - type\s+(\S+):\s+(\d+) tensors/))) {
        (lc.tensor_types ??= {})[m[1]] = Number(m[2]);
    }
}
if (lc.loaded) {
    const meta = JSON.parse(run.stdout);
    lc.architecture = meta.architecture;
    lc.tensor_count = meta.tensor_count;
    lc.kv_count = meta.kv_count;
    lc.tensor_types = meta.tensor_types;
}
if (lc.kv_count == null) {
    process.stderr.write(`ref-meta: llama.cpp did not read the metadata of ${file}:\n${run.stderr}\n`);
    process.exit(1);
}

const g = await readGgufFileInfo(path.resolve(file), {readTensorInfo: true});
const flat = {};
const walk = (o, prefix) => {
    for (const [k, v] of Object.entries(o)) {
        const key = prefix ? `${prefix}.${k}` : k;
        if (Array.isArray(v) || ArrayBuffer.isView(v)) flat[key] = {array_length: v.length, head: Array.from(v.slice(0, 3), (x) => typeof x === "bigint" ? x.toString() : x)};
        else if (v != null && typeof v === "object") walk(v, key);
        else flat[key] = typeof v === "bigint" ? v.toString() : v;
    }
};
walk(g.metadata, "");
const typeIds = {};
for (const t of g.tensorInfo ?? []) typeIds[t.ggmlType] = (typeIds[t.ggmlType] ?? 0) + 1;
const out = {
    file: path.basename(file),
    synth_args: synthArgs ? JSON.parse(synthArgs) : undefined,
    llama_cpp: lc,
    gguf_js: {version: g.version, tensor_count: Number(g.tensorCount), tensor_type_ids: typeIds, metadata: flat},
};
fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + "\n");
process.stderr.write(`ref-meta: ${path.basename(file)}: llama.cpp ${lc.loaded ? "loaded" : "read metadata of"} it (${lc.kv_count} kv, ${lc.tensor_count} tensors)\n`);
