#!/usr/bin/env bash
# Regenerates testdata/refmeta/*.json: llama.cpp's view (via the reference
# harness, default /work/ref or $REF) of every vocab file in ../shared/vocab,
# every model in ../shared/models, and a few synthetic models made by
# `memvanta synth` (their flags are recorded so the Go test can re-make them).
# Needs node; CI does not run this, it runs the Go test against the goldens.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${REF:-/work/ref}
SHARED=${SHARED:-../shared}
out=testdata/refmeta
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/memvanta" ./cmd/memvanta

for f in "$SHARED"/vocab/*.gguf "$SHARED"/models/*.gguf; do
  [ -e "$f" ] || continue
  node scripts/ref-meta.mjs "$REF" "$out/$(basename "$f" .gguf).json" "$f"
done

synth() { # name, flags...
  local name=$1; shift
  "$tmp/memvanta" synth -q -o "$tmp/$name.gguf" "$@"
  local args; args=$(printf '%s\n' "$@" | python3 -c 'import json,sys; print(json.dumps([l.rstrip("\n") for l in sys.stdin]))')
  node scripts/ref-meta.mjs "$REF" "$out/$name.json" "$tmp/$name.gguf" "$args"
}
synth synth-f16-spm --embd 256 --layers 2 --heads 4 --kv-heads 2 --ff 512 --ctx 512 --type F16 --vocab-from "$SHARED/vocab/ggml-vocab-llama-spm.gguf" --seed 1
synth synth-q4_0-bpe --embd 256 --layers 3 --heads 8 --kv-heads 2 --ff 768 --ctx 1024 --type Q4_0 --vocab-from "$SHARED/vocab/ggml-vocab-llama-bpe.gguf" --seed 2
synth synth-q8_0-own --embd 128 --layers 1 --heads 2 --kv-heads 1 --ff 256 --ctx 256 --type Q8_0 --vocab 1000 --seed 3
synth synth-bf16-own --embd 256 --layers 1 --heads 4 --kv-heads 4 --ff 512 --ctx 256 --type BF16 --vocab 512 --seed 4
node scripts/ref-meta.mjs "$REF" "$out/corpus-base.json" testdata/gguf/valid/base.gguf
echo "wrote $(ls "$out" | wc -l) goldens to $out"
