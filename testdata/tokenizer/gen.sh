#!/bin/sh
# Regenerates testdata/tokenizer/golden.json.gz from llama.cpp (node-llama-cpp in
# the reference harness, REF_DIR, default /work/ref) over the vocab-only GGUFs
# in ../shared/vocab, some with tokenizer metadata overridden so that every
# pre-tokenizer kind is exercised. Run from the repository root:
#   sh testdata/tokenizer/gen.sh
set -eu
VOCAB=${VOCAB:-../shared/vocab}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
HERE=testdata/tokenizer
manifest="["
sep=""
add() { # name base key=value...
    name=$1; base=$2; shift 2
    out="$TMP/$name.gguf"
    go run ./$HERE/genvocab "$VOCAB/$base" "$out" "$@"
    ov="{"; osep=""
    for kv in "$@"; do
        k=${kv%%=*}; v=${kv#*=}
        case $v in true|false) ov="$ov$osep\"$k\":$v";; *) ov="$ov$osep\"$k\":\"$v\"";; esac
        osep=","
    done
    ov="$ov}"
    manifest="$manifest$sep{\"name\":\"$name\",\"base\":\"$base\",\"overrides\":$ov,\"path\":\"$out\"}"
    sep=","
}
for f in llama-spm phi-3 llama-bpe gpt-2 falcon mpt starcoder deepseek-coder; do
    add "$f" "ggml-vocab-$f.gguf"
done
add spm-noprefix-eos ggml-vocab-llama-spm.gguf tokenizer.ggml.add_space_prefix=false tokenizer.ggml.add_eos_token=true
for pre in default qwen2 stablelm2 deepseek-llm deepseek-coder command-r refact smollm phi-2 bloom viking llama3; do
    add "gpt2-$pre" ggml-vocab-gpt-2.gguf tokenizer.ggml.pre=$pre
done
add llama-bpe-qwen2 ggml-vocab-llama-bpe.gguf tokenizer.ggml.pre=qwen2
add llama-bpe-dbrx ggml-vocab-llama-bpe.gguf tokenizer.ggml.pre=dbrx
add gpt2-chatglm-bpe ggml-vocab-gpt-2.gguf tokenizer.ggml.pre=chatglm-bpe
add gpt2-trillion ggml-vocab-gpt-2.gguf tokenizer.ggml.pre=trillion
add starcoder-mellum2 ggml-vocab-starcoder.gguf tokenizer.ggml.pre=mellum2
add gpt2-prefix ggml-vocab-gpt-2.gguf tokenizer.ggml.add_space_prefix=true
add gpt2-tekken ggml-vocab-gpt-2.gguf tokenizer.ggml.pre=tekken
add llama-bpe-tekken ggml-vocab-llama-bpe.gguf tokenizer.ggml.pre=tekken
add gpt2-gpt-4o ggml-vocab-gpt-2.gguf tokenizer.ggml.pre=gpt-4o
add llama-bpe-llama4 ggml-vocab-llama-bpe.gguf tokenizer.ggml.pre=llama4
manifest="$manifest]"
printf '%s' "$manifest" > "$TMP/manifest.json"
node $HERE/reftok.mjs "$TMP/manifest.json" $HERE/texts.json > "$TMP/golden.json"
gzip -9n < "$TMP/golden.json" > $HERE/golden.json.gz
echo "wrote $HERE/golden.json.gz"
