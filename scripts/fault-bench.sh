#!/usr/bin/env bash
# Side-by-side cost of the SIGBUS recovery (pool workers with
# SetPanicOnFault, Forward's recover): BenchmarkForwardToken of
# native/weights on HEAD with the recovery's commits reverted ("before")
# and on HEAD ("after"), alternating rounds in one session, then the ratio
# of the medians per mode. Only the reverted commits differ.
#   ROUNDS=5 ITERS=100 scripts/fault-bench.sh COMMIT...
#   (the recovery: git log --grep='^fault:' --format=%h)
# Reverting those commits conflicts on heads after 0485583 (native/runtime became
# native/weights): run it from a checkout of 0485583, where the README's figure came from.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}; iters=${ITERS:-100}
[ $# -gt 0 ] || set -- $(git log --grep='^fault:' --format=%h)
tmp=$(mktemp -d); trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/before" HEAD
git -C "$tmp/before" revert --no-commit "$@"
cp native/weights/bench_forward_test.go "$tmp/before/native/weights/"
(cd "$tmp/before" && go test -c -o "$tmp/before.test" ./native/weights)
go test -c -o "$tmp/after.test" ./native/weights
for r in $(seq "$rounds"); do
  for v in before after; do
    (cd native/weights && "$tmp/$v.test" -test.run XXX -test.bench ForwardToken -test.benchtime "${iters}x") |
      awk -v v=$v -v r=$r '/^BenchmarkForwardToken/ {print v, r, $1, $3, $5}'
  done
done | tee "$tmp/all.txt"
python3 - "$tmp/all.txt" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, r, name, ns, cpu = line.split()
    d[(name, v, 'wall')].append(float(ns))
    d[(name, v, 'cpu')].append(float(cpu))
for name in sorted({k[0] for k in d}):
    for m in ('cpu', 'wall'):
        b, a = statistics.median(d[(name, 'before', m)]), statistics.median(d[(name, 'after', m)])
        print(f"{name} {m}: before {b/1e6:.2f} ms/token, after {a/1e6:.2f} ms/token (medians of {len(d[(name,'after',m)])}), after/before {a/b:.3f}")
PY
