#!/bin/sh
# Usage: scripts/bench-vs-llama.sh [-r ROUNDS] [-R REF_DIR] [-b MEMVANTA] MODEL.gguf -- BENCH_FLAGS...
#
# Side-by-side throughput and peak RSS of memvanta and llama.cpp on the same
# GGUF. The two engines run alternately, ROUNDS times each (default 2), so a
# noisy machine slows both alike; every round is a separate process under
# /usr/bin/time -v. BENCH_FLAGS are memvanta bench flags (-p -n -r -t -c and
# memory flags); -p, -n, -r, -t and -c are passed on to llama.cpp too (its
# reference harness, node-llama-cpp, in REF_DIR: a writable copy of
# ../shared/ref after `npm ci`, default /work/ref).
#
# Prints one line per process and a markdown table: the best round of each
# engine (the least-disturbed one on a shared machine), llama.cpp's own
# llama_perf timing, and memvanta/llama.cpp ratios.
# Needs: /usr/bin/time (Debian "time"), node, python3.
set -eu
rounds=2
ref=/work/ref
mv=memvanta
while [ $# -gt 0 ]; do
    case $1 in
    -r) rounds=$2; shift 2 ;;
    -R) ref=$2; shift 2 ;;
    -b) mv=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] && [ "$2" = "--" ] || { echo "usage: $0 [-r ROUNDS] [-R REF_DIR] [-b MEMVANTA] MODEL.gguf -- BENCH_FLAGS..." >&2; exit 2; }
model=$1
shift 2
refargs=$(python3 - "$@" <<'EOF'
import sys
a, out, m = sys.argv[1:], [], {"-p": "-p", "-n": "-n", "-r": "--reps", "-t": "--threads", "-c": "--ctx"}
i = 0
while i < len(a):
    if a[i] in m and i + 1 < len(a):
        out += [m[a[i]], a[i + 1]]; i += 2
    else:
        i += 1
print(" ".join(out))
EOF
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=1
while [ "$i" -le "$rounds" ]; do
    echo "round $i/$rounds: memvanta bench -m $model $* --json" >&2
    /usr/bin/time -v -o "$tmp/mv$i.time" "$mv" bench -m "$model" "$@" --json >"$tmp/mv$i.json"
    echo "round $i/$rounds: node ref.mjs bench $model $refargs" >&2
    # shellcheck disable=SC2086
    (cd "$ref" && /usr/bin/time -v -o "$tmp/ref$i.time" node ref.mjs bench "$model" $refargs >"$tmp/ref$i.json")
    i=$((i + 1))
done
python3 - "$tmp" "$rounds" "$model" <<'EOF'
import json, re, sys
d, rounds, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rss(path):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read())
    return int(m.group(1)) / 1024
best = {}
for i in range(1, rounds + 1):
    mv = json.load(open(f"{d}/mv{i}.json"))
    ref = json.load(open(f"{d}/ref{i}.json"))
    row = {"rss": rss(f"{d}/mv{i}.time")}
    for r in mv["results"]:
        row[r["test"]] = (r["tps_mean"], r["tps_stdev"])
    rrow = {"rss": rss(f"{d}/ref{i}.time")}
    for test, v in ref["results"].items():
        if v:
            rrow[test] = (v["llama_perf"]["tps_mean"], v["llama_perf"]["tps_stdev"])
    print(f"round {i}: memvanta " + ", ".join(f"{k} {v[0]:.2f}±{v[1]:.2f}" for k, v in row.items() if k != "rss")
          + f", {row['rss']:.0f} MiB | llama.cpp " + ", ".join(f"{k} {v[0]:.2f}±{v[1]:.2f}" for k, v in rrow.items() if k != "rss")
          + f", {rrow['rss']:.0f} MiB")
    for eng, r in (("memvanta", row), ("llama.cpp", rrow)):
        b = best.setdefault(eng, {})
        for k, v in r.items():
            if k == "rss":
                b[k] = max(b.get(k, 0), v)
            elif k not in b or v[0] > b[k][0]:
                b[k] = v
tests = [k for k in best["memvanta"] if k != "rss"]
print(f"\n{model}, best of {rounds} rounds (tok/s mean ± sd over repetitions; peak RSS is the largest round's)\n")
print("| engine | " + " | ".join(tests) + " | peak RSS |")
print("|---|" + "---|" * (len(tests) + 1))
for eng in ("memvanta", "llama.cpp"):
    b = best[eng]
    print(f"| {eng} | " + " | ".join(f"{b[t][0]:.2f} ± {b[t][1]:.2f}" if t in b else "-" for t in tests) + f" | {b['rss']:.0f} MiB |")
m, r = best["memvanta"], best["llama.cpp"]
print("| ratio | " + " | ".join(f"{m[t][0] / r[t][0]:.2f}×" if t in r else "-" for t in tests) + f" | {m['rss'] / r['rss']:.2f}× |")
EOF
