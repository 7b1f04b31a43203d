#!/usr/bin/env bash
# contend.sh [-j JOBS] MEMVANTA MODEL [bench args...]
#
# Runs JOBS (default 2) `memvanta bench --json` processes on MODEL at once and
# prints each one's tok/s per test and their sum: generation when the
# machine has more runnable threads than CPUs (two processes of -t 2 on two
# cores), which a single-process benchmark never shows. Example:
#   scripts/contend.sh ./memvanta q4_0.gguf -p 0 -n 64 -r 2 -t 2
set -euo pipefail
jobs=2
if [ "${1:-}" = -j ]; then jobs=$2; shift 2; fi
[ $# -ge 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
bin=$1 model=$2; shift 2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for i in $(seq "$jobs"); do
    "$bin" bench -m "$model" --json "$@" >"$dir/$i.json" 2>"$dir/$i.err" &
done
wait
python3 - "$dir" "$jobs" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
tot = {}
for i in range(1, n + 1):
    r = json.load(open(f"{d}/{i}.json"))
    row = {x["test"]: x["tps_mean"] for x in r["results"]}
    print(f"process {i}: " + " ".join(f"{k} {v:.2f}" for k, v in row.items()))
    for k, v in row.items():
        tot[k] = tot.get(k, 0) + v
print("sum: " + " ".join(f"{k} {v:.2f}" for k, v in tot.items()))
PY
