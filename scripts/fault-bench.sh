#!/usr/bin/env bash
# Side-by-side cost of the SIGBUS recovery (pool workers with
# SetPanicOnFault, Forward's recover): BenchmarkForwardToken of
# native/runtime on a commit before the recovery and on HEAD, alternating
# rounds in one session, then the ratio of the medians per mode.
#   scripts/fault-bench.sh [BEFORE_REV=aa57bfd] [ROUNDS=5] [ITERS=100]
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:-aa57bfd}; rounds=${2:-5}; iters=${3:-100}
tmp=$(mktemp -d); trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/before" "$before"
cp native/runtime/bench_forward_test.go "$tmp/before/native/runtime/"
(cd "$tmp/before" && go test -c -o "$tmp/before.test" ./native/runtime)
go test -c -o "$tmp/after.test" ./native/runtime
for r in $(seq "$rounds"); do
  for v in before after; do
    (cd native/runtime && "$tmp/$v.test" -test.run XXX -test.bench ForwardToken -test.benchtime "${iters}x") |
      awk -v v=$v -v r=$r '/^BenchmarkForwardToken/ {print v, r, $1, $3}'
  done
done | tee "$tmp/all.txt"
python3 - "$tmp/all.txt" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, r, name, ns = line.split()
    d[(name, v)].append(float(ns))
for name in sorted({k[0] for k in d}):
    b, a = statistics.median(d[(name, 'before')]), statistics.median(d[(name, 'after')])
    print(f"{name}: before {b/1e6:.2f} ms/token, after {a/1e6:.2f} ms/token (medians of {len(d[(name,'after')])}), after/before time {a/b:.3f}")
PY
