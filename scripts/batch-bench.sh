#!/usr/bin/env bash
# Warm throughput of the batch scan `memvanta inspect --json DIR` (each file
# in a fresh sandbox instance of one compiled guest, -j workers): 1000 tiny
# complete models and 20 multi-GB 7B-shaped models (sparse: real header and
# tensor table, data left as a hole; inspect reads only the header).
#   scripts/batch-bench.sh [DIR=/tmp/memvanta-scan] [RUNS=3] [JOBS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/memvanta-scan}; runs=${2:-3}; jobs=${3:-2}
vocab=../shared/vocab/ggml-vocab-llama-spm.gguf
[ -f "$vocab" ] || vocab=""
go build -o "$dir.memvanta" ./cmd/memvanta
if [ ! -d "$dir/small" ]; then
  go run ./internal/cmd/scanbench -dir "$dir" -small 1000 -big 20 ${vocab:+-vocab "$vocab"}
fi
for set in small big; do
  # Warm-up: compilation cache and page cache.
  "$dir.memvanta" inspect --json -j "$jobs" "$dir/$set" | tail -1 >/dev/null || true
  for r in $(seq "$runs"); do
    /usr/bin/time -f "$set run $r: %e s wall, %M KiB max RSS" \
      "$dir.memvanta" inspect --json -j "$jobs" "$dir/$set" | tail -1
  done
done
