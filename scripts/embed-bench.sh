#!/usr/bin/env bash
# Embeddings per second, memvanta embed against llama.cpp's embedding
# context, on a synthetic file of nomic-embed size: 768 x 12 layers, 12
# heads, ff 3072. Two architectures:
#   qwen3       a last-token-pooled decoder (32k SPM vocabulary; ~137M
#               parameters plus a 25M output matrix),
#   nomic-bert  nomic-embed-text-v1.5's own shape (the encoder: fused
#               attn_qkv, RoPE base 1000, SwiGLU, mean pooling, the bge
#               WordPiece vocabulary of 30522 tokens: ~137M parameters).
# 32 inputs of 512 tokens embedded one after another, 2 threads; the two
# engines run interleaved, ROUNDS times each (memvanta's time includes
# loading the file; llama.cpp's is its embedding loop alone, after a
# warm-up). Needs eval "$(cat /tmp/llama-tools.env)" (MEMVANTA_REF).
# Usage: scripts/embed-bench.sh [TYPE] [ARCH]   (default Q8_0 qwen3)
set -euo pipefail
cd "$(dirname "$0")/.."
TYPE=${1:-Q8_0}
ARCH=${2:-qwen3}
ROUNDS=${ROUNDS:-1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/memvanta" ./cmd/memvanta
case $ARCH in
qwen3)
    "$TMP/memvanta" synth -o "$TMP/m.gguf" --type "$TYPE" --embd 768 --layers 12 --heads 12 --kv-heads 12 --ff 3072 --ctx 2048 \
        --arch qwen3 --head-dim 64 --pooling last --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf -q
    WORDS=511 ;; # 512 tokens with BOS
nomic-bert)
    "$TMP/memvanta" synth -o "$TMP/m.gguf" --type "$TYPE" --embd 768 --layers 12 --heads 12 --kv-heads 12 --ff 3072 --ctx 2048 \
        --arch nomic-bert --fused-qkv --rope-base 1000 --eps 1e-12 --pooling mean \
        --vocab-from ../shared/vocab-wordpiece/ggml-vocab-bert-bge.gguf -q
    WORDS=510 ;; # 512 tokens with [CLS] and [SEP]
*)
    echo "unknown ARCH $ARCH (qwen3, nomic-bert)" >&2; exit 2 ;;
esac
python3 - "$TMP" "$WORDS" <<'PY'
import json, random, sys
random.seed(1)
words = "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will can more out up".split()
texts = [" ".join(random.choice(words) for _ in range(int(sys.argv[2]))) for _ in range(32)]
json.dump(texts, open(sys.argv[1] + "/texts.json", "w"))
open(sys.argv[1] + "/texts.txt", "w").write("\n".join(texts) + "\n")
PY
echo "$ARCH $TYPE, $(du -m "$TMP/m.gguf" | cut -f1) MiB file"
for r in $(seq "$ROUNDS"); do
    echo "round $r, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "memvanta: %e s wall for 32 embeddings (incl. load), %U s user, peak RSS %M KiB" \
        "$TMP/memvanta" embed -m "$TMP/m.gguf" -f "$TMP/texts.txt" -t 2 -b 512 -c 1024 --no-escape >/dev/null
    /usr/bin/time -f "llama.cpp (node process): %U s user, peak RSS %M KiB" node scripts/embed-bench.mjs "$TMP/m.gguf" "$TMP/texts.json"
done
