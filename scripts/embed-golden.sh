#!/usr/bin/env bash
# Regenerates testdata/golden/embed-*.json: llama.cpp's pooled embeddings on
# synthetic embedding models (memvanta synth ... --pooling), F16 and Q8_0:
# a last-token-pooled qwen3 (SPM vocabulary), and the encoders bert (CLS
# pooling, every bias) and nomic-bert (mean pooling, fused attn_qkv, RoPE)
# with the bge WordPiece vocabulary; plus rerank-{bert,qwen3}-*.json,
# llama.cpp's ranking-context scores on a bert file with a classifier head
# and a qwen3 file with Qwen3-Reranker's (cls.output, yes/no).
# Needs the ref harness: eval "$(cat /tmp/llama-tools.env)" (MEMVANTA_REF).
# Usage: scripts/embed-golden.sh [NAME...]   (default: all; names below)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-..}/shared
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/texts.json" <<'J'
["Hello world", "The quick brown fox jumps over the lazy dog.", "a", "Embeddings map text to vectors; similar texts land close together, and retrieval ranks documents by cosine similarity to the query."]
J
cat > "$TMP/rank.json" <<'J'
["what is a panda?", "hi", "The giant panda (Ailuropoda melanoleuca), sometimes called a panda bear or simply panda, is a bear species endemic to China.", "Paris is the capital of France.", "Café crème, naïve façade: 東京 and ¿qué? !!!"]
J
go build -o "$TMP/memvanta" ./cmd/memvanta
# one NAME ARCH-JSON TYPE VOCAB EPS MODE synth-flags...; VOCAB is relative
# to ../shared (the replay looks there).
one() {
    local name=$1 archjson=$2 type=$3 vocab=$4 eps=$5 mode=$6; shift 6
    "$TMP/memvanta" synth -o "$TMP/m.gguf" --type "$type" --embd 256 --layers 4 --heads 8 --kv-heads 2 --ff 512 --ctx 512 \
        --rope-base 1000000 --eps "$eps" --seed 100 --vocab-from "$SHARED/$vocab" "$@" >/dev/null
    local sum out texts=$TMP/texts.json prefix=embed
    sum=$(sha256sum "$TMP/m.gguf" | cut -d' ' -f1)
    if [ "$mode" = rank ]; then texts=$TMP/rank.json prefix=rerank; fi
    out=testdata/golden/$prefix-$name-$type.json
    REF_DIR=${MEMVANTA_REF:-/work/ref} node scripts/embed-goldens.mjs "$TMP/m.gguf" "$texts" $mode > "$TMP/ref.json"
    python3 - "$TMP/ref.json" "$sum" "$type" "$archjson" "$vocab" "$eps" > "$out" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
out = {"generator": "scripts/embed-golden.sh",
       "synth": {"embd": 256, "layers": 4, "heads": 8, "kv_heads": 2, "ff": 512, "ctx": 512, "rope_base": 1000000,
                 "eps": float(sys.argv[6]), "type": sys.argv[3], "seed": 100, "vocab": sys.argv[5],
                 "arch": json.loads(sys.argv[4])},
       "model_sha256": sys.argv[2], "llama_cpp_release": ref["llama_cpp_release"], "cases": ref["cases"]}
json.dump(out, sys.stdout, indent=1)
PY
    echo "wrote $out"
}
want() { [ $# -eq 0 ] || [[ " $* " == *" $NAME "* ]]; }
for type in F16 Q8_0; do
    NAME=qwen3-last; if want "$@"; then
        one qwen3-last '{"name":"qwen3","head_dim":64,"pooling":"last"}' $type vocab/ggml-vocab-llama-spm.gguf 1e-6 embed \
            --arch qwen3 --head-dim 64 --pooling last
    fi
    NAME=bert-cls; if want "$@"; then
        one bert-cls '{"name":"bert","bias":true,"pooling":"cls"}' $type vocab-wordpiece/ggml-vocab-bert-bge.gguf 1e-12 embed \
            --arch bert --bias --pooling cls
    fi
    NAME=nomic-bert-mean; if want "$@"; then
        one nomic-bert-mean '{"name":"nomic-bert","fused_qkv":true,"pooling":"mean"}' $type vocab-wordpiece/ggml-vocab-bert-bge.gguf 1e-12 embed \
            --arch nomic-bert --fused-qkv --pooling mean
    fi
    NAME=qwen3; if want "$@"; then
        one qwen3 '{"name":"qwen3","head_dim":64,"classifier":true,"pooling":"rank"}' $type vocab/ggml-vocab-llama-spm.gguf 1e-6 rank \
            --arch qwen3 --head-dim 64 --classifier --pooling rank
    fi
    NAME=bert; if want "$@"; then
        one bert '{"name":"bert","bias":true,"classifier":true,"pooling":"rank"}' $type vocab-wordpiece/ggml-vocab-bert-bge.gguf 1e-12 rank \
            --arch bert --bias --classifier --pooling rank
    fi
done
