#!/bin/sh
# Differential check of context shift against llama.cpp: greedy generation
# past the context with memvanta generate --context-shift and with
# llama.cpp's K-shift (scripts/ctxshift-ref.mjs, node-llama-cpp), the same
# keep and discard; prints where the token streams first differ.
#
#   scripts/ctxshift-ref.sh [MODEL.gguf] [KEEP] [N] [KV]
#
# Defaults: ../shared/models/stories260K-F32.gguf (a real llama model, head
# 8), --keep 3 (BOS + 3 kept), 800 tokens, f16 cache, context 256 for
# llama.cpp (its minimum): a full sequence is 255 tokens there, which is
# generate's -c 255 (its slot holds one position more, see generate.go).
# Needs MEMVANTA_REF (eval "$(cat /tmp/llama-tools.env)").
set -eu
MODEL=${1:-../shared/models/stories260K-F32.gguf}
KEEP=${2:-3}
N=${3:-800}
KV=${4:-f16}
: "${MEMVANTA_REF:?set MEMVANTA_REF (eval \"\$(cat /tmp/llama-tools.env)\")}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/memvanta" ./cmd/memvanta
"$tmp/memvanta" generate -m "$MODEL" -p "Once upon a time" -c 255 -n "$N" --temp 0 --ignore-eos \
	--context-shift --keep "$KEEP" --kv "$KV" -t 1 --json >"$tmp/mv.json" 2>"$tmp/mv.err"
tail -n 1 "$tmp/mv.err"
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["prompt_token_ids"]))' "$tmp/mv.json" >"$tmp/prompt.json"
# generate's keep (llama-cli's n_keep): --keep after BOS; the whole prompt
# for -1 or more than it.
KEEPALL=$(python3 -c 'import json,sys; p=len(json.load(open(sys.argv[1]))); k=int(sys.argv[2]); print(p if k < 0 or k > p else k + 1)' "$tmp/prompt.json" "$KEEP")
KVT=$(echo "$KV" | tr a-z A-Z) node scripts/ctxshift-ref.mjs "$MODEL" "$(cat "$tmp/prompt.json")" 256 "$KEEPALL" "$N" >"$tmp/ref.json"
python3 - "$tmp/mv.json" "$tmp/ref.json" <<'PY'
import json, sys
mv, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a, b = mv["tokens"], ref["tokens"]
d = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
print(f"memvanta: {len(a)} tokens, {mv['stats'].get('context_shifts', 0)} shifts; llama.cpp: {len(b)} tokens, {ref['shifts']} shifts")
print("identical" if not d and len(a) == len(b) else f"first difference at token {d[0] if d else min(len(a), len(b))} ({len(d)} differ)")
sys.exit(1 if d or len(a) != len(b) else 0)
PY
