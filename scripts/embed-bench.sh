#!/usr/bin/env bash
# Embeddings per second, memvanta embed against llama.cpp's embedding
# context, on a synthetic last-token-pooled qwen3 file of nomic-embed size
# (768 x 12 layers, ff 3072, 32k vocabulary: ~137M parameters plus a 25M
# output matrix), 32 inputs of 512 tokens embedded one after another, 2
# threads. Needs eval "$(cat /tmp/llama-tools.env)" (MEMVANTA_REF).
# Usage: scripts/embed-bench.sh [TYPE]   (default Q8_0)
set -euo pipefail
cd "$(dirname "$0")/.."
TYPE=${1:-Q8_0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/memvanta" ./cmd/memvanta
"$TMP/memvanta" synth -o "$TMP/m.gguf" --type "$TYPE" --embd 768 --layers 12 --heads 12 --kv-heads 12 --ff 3072 --ctx 2048 \
    --arch qwen3 --head-dim 64 --pooling last --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf -q
python3 - "$TMP" <<'PY'
import json, random, sys
random.seed(1)
words = "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will can more out up".split()
texts = [" ".join(random.choice(words) for _ in range(511)) for _ in range(32)]  # 512 tokens with BOS
json.dump(texts, open(sys.argv[1] + "/texts.json", "w"))
open(sys.argv[1] + "/texts.txt", "w").write("\n".join(texts) + "\n")
PY
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "memvanta: %e s wall for 32 embeddings (incl. load), peak RSS %M KiB" \
    "$TMP/memvanta" embed -m "$TMP/m.gguf" -f "$TMP/texts.txt" -t 2 -b 512 -c 1024 --no-escape >/dev/null
/usr/bin/time -f "llama.cpp (node process): peak RSS %M KiB" node scripts/embed-bench.mjs "$TMP/m.gguf" "$TMP/texts.json"
