#!/usr/bin/env bash
# Regenerates testdata/golden/embed-*.json: llama.cpp's pooled embeddings on
# synthetic embedding models (memvanta synth ... --pooling), F16 and Q8_0.
# Needs the ref harness: eval "$(cat /tmp/llama-tools.env)" (MEMVANTA_REF).
set -euo pipefail
cd "$(dirname "$0")/.."
VOCAB=${VOCAB:-../shared/vocab}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/texts.json" <<'J'
["Hello world", "The quick brown fox jumps over the lazy dog.", "a", "Embeddings map text to vectors; similar texts land close together, and retrieval ranks documents by cosine similarity to the query."]
J
go build -o "$TMP/memvanta" ./cmd/memvanta
# name arch-json synth-flags...
one() {
    local name=$1 archjson=$2 type=$3; shift 3
    "$TMP/memvanta" synth -o "$TMP/m.gguf" --type "$type" --embd 256 --layers 4 --heads 8 --kv-heads 2 --ff 512 --ctx 512 \
        --rope-base 1000000 --eps 1e-6 --seed 100 --vocab-from "$VOCAB/ggml-vocab-llama-spm.gguf" "$@" >/dev/null
    local sum
    sum=$(sha256sum "$TMP/m.gguf" | cut -d' ' -f1)
    REF_DIR=${MEMVANTA_REF:-/work/ref} node scripts/embed-goldens.mjs "$TMP/m.gguf" "$TMP/texts.json" > "$TMP/ref.json"
    python3 - "$TMP/ref.json" "$sum" "$type" "$archjson" > "testdata/golden/embed-$name-$type.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
out = {"generator": "scripts/embed-golden.sh",
       "synth": {"embd": 256, "layers": 4, "heads": 8, "kv_heads": 2, "ff": 512, "ctx": 512, "rope_base": 1000000,
                 "eps": 0.000001, "type": sys.argv[3], "seed": 100, "vocab": "ggml-vocab-llama-spm.gguf",
                 "arch": json.loads(sys.argv[4])},
       "model_sha256": sys.argv[2], "llama_cpp_release": ref["llama_cpp_release"], "cases": ref["cases"]}
json.dump(out, sys.stdout, indent=1)
PY
    echo "wrote testdata/golden/embed-$name-$type.json"
}
for type in F16 Q8_0; do
    one qwen3-last '{"name":"qwen3","head_dim":64,"pooling":"last"}' $type --arch qwen3 --head-dim 64 --pooling last
done
