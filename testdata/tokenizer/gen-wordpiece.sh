#!/bin/sh
# Regenerates testdata/tokenizer/golden-wordpiece.json.gz: llama.cpp's
# tokenization (node-llama-cpp in REF_DIR, default /work/ref) of texts.json
# and texts-wordpiece.json on ../shared/vocab-wordpiece's bge vocabulary.
# Run from the repository root: sh testdata/tokenizer/gen-wordpiece.sh
set -eu
VOCAB=${VOCAB:-../shared/vocab-wordpiece}
HERE=testdata/tokenizer
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])) + json.load(open(sys.argv[2]))))' \
    $HERE/texts.json $HERE/texts-wordpiece.json > "$TMP/texts.json"
printf '[{"name":"bert-bge","base":"ggml-vocab-bert-bge.gguf","overrides":{},"path":"%s"}]' \
    "$(realpath "$VOCAB/ggml-vocab-bert-bge.gguf")" > "$TMP/manifest.json"
node $HERE/reftok.mjs "$TMP/manifest.json" "$TMP/texts.json" > "$TMP/golden.json"
gzip -9n < "$TMP/golden.json" > $HERE/golden-wordpiece.json.gz
echo "wrote $HERE/golden-wordpiece.json.gz"
