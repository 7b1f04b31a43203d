#!/usr/bin/env bash
# memvanta's pooled embeddings against llama.cpp's on llama.cpp-quantized
# encoder files: the synthetic bert (CLS) and nomic-bert (mean) files of
# scripts/embed-golden.sh, written F16 and quantized by llama.cpp's own
# quantizer (default Q4_K_M); prints the worst cosine similarity over the
# golden texts. Needs eval "$(cat /tmp/llama-tools.env)" (MEMVANTA_QUANTIZE,
# MEMVANTA_LIBLLAMA, MEMVANTA_REF).
# Usage: scripts/embed-quant-check.sh [FTYPE]
set -euo pipefail
cd "$(dirname "$0")/.."
FT=${1:-Q4_K_M}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/memvanta" ./cmd/memvanta
cat > "$TMP/texts.json" <<'J'
["Hello world", "The quick brown fox jumps over the lazy dog.", "a", "Embeddings map text to vectors; similar texts land close together, and retrieval ranks documents by cosine similarity to the query."]
J
python3 -c "import json,sys; open(sys.argv[2],'w').write('\n'.join(json.load(open(sys.argv[1])))+'\n')" "$TMP/texts.json" "$TMP/texts.txt"
shape=(--type F16 --embd 256 --layers 4 --heads 8 --kv-heads 2 --ff 512 --ctx 512 --eps 1e-12 --seed 100
    --vocab-from ../shared/vocab-wordpiece/ggml-vocab-bert-bge.gguf -q)
"$TMP/memvanta" synth -o "$TMP/bert.gguf" "${shape[@]}" --arch bert --bias --pooling cls --rope-base 1000000
"$TMP/memvanta" synth -o "$TMP/nomic-bert.gguf" "${shape[@]}" --arch nomic-bert --fused-qkv --pooling mean --rope-base 1000
for a in bert nomic-bert; do
    "$MEMVANTA_QUANTIZE" --lib "$MEMVANTA_LIBLLAMA" --threads 2 "$TMP/$a.gguf" "$TMP/$a-$FT.gguf" "$FT" >"$TMP/q.log" 2>&1 ||
        { cat "$TMP/q.log"; exit 1; }
    REF_DIR=$MEMVANTA_REF node scripts/embed-goldens.mjs "$TMP/$a-$FT.gguf" "$TMP/texts.json" > "$TMP/ref.json"
    "$TMP/memvanta" embed -m "$TMP/$a-$FT.gguf" -f "$TMP/texts.txt" --no-escape --embd-normalize -1 > "$TMP/ours.txt"
    python3 - "$TMP/ref.json" "$TMP/ours.txt" "$a-$FT" <<'PY'
import json, math, sys
ref = json.load(open(sys.argv[1]))["cases"]
ours = [list(map(float, l.split())) for l in open(sys.argv[2])]
w = 1.0
for c, o in zip(ref, ours, strict=True):
    a = c["embedding"]
    w = min(w, sum(x * y for x, y in zip(a, o)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in o)))
print(f"{sys.argv[3]}: worst cosine with llama.cpp 1-{1 - w:.3g}")
PY
done
