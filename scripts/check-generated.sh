#!/usr/bin/env bash
# Fails if a committed generated file (one whose header says "Code generated
# ... DO NOT EDIT.") is not exactly what its //go:generate directive writes
# today, so a hand edit to generated assembly, or a generator change without
# regenerating, cannot pass CI. The generators run twice and must agree byte
# for byte (no map order, environment or time may reach the output). The
# wasm guests and their sums are generated too but take minutes to build;
# scripts/check-wasm-stale.sh checks them, so wasmhost/ is left out here.
#
# Each generated file is deleted before the generators run, so a file that no
# directive writes any more is reported rather than compared with itself. The
# tree is restored as found whatever the outcome. Fix a failure by changing
# the generator (never its output), running go generate ./kernels and
# committing both.
#
# go generate runs for the host GOARCH only (its go run builds generators
# for the GOARCH it is given, which the host may not execute), so directives
# belong in files built for every GOARCH (kernels/generate.go); one in an
# _arm64.go file would leave its output unwritten here, reported below.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files -co --exclude-standard -z | xargs -r0 grep -lE '^// Code generated .* DO NOT EDIT\.$' -- 2>/dev/null |
  grep -v '^wasmhost/' | sort)
mapfile -t dirs < <(git ls-files -co --exclude-standard -z '*.go' | xargs -r0 grep -l '^//go:generate ' -- | grep -v '^wasmhost/' |
  xargs -r -n1 dirname | sort -u)
if [ ${#files[@]} -eq 0 ]; then echo "no generated files found" >&2; exit 1; fi

tmp=$(mktemp -d)
for f in "${files[@]}"; do mkdir -p "$tmp/orig/$(dirname "$f")"; cp -p "$f" "$tmp/orig/$f"; done
restore() {
  for f in "${files[@]}"; do cp -p "$tmp/orig/$f" "$f"; done
  rm -rf "$tmp"
}
trap restore EXIT

status=0
for pass in 1 2; do
  rm -f "${files[@]}"
  for d in "${dirs[@]}"; do
    if ! go generate "./$d" >"$tmp/gen.log" 2>&1; then
      cat "$tmp/gen.log" >&2
      echo "GENERATOR FAILED: go generate ./$d" >&2
      exit 1
    fi
  done
  for f in "${files[@]}"; do
    if [ ! -f "$f" ]; then
      echo "NOT GENERATED: $f says it is generated, but no //go:generate directive in ${dirs[*]} wrote it (a directive in a file not built for $(go env GOARCH) does not run)" >&2
      status=1
      continue
    fi
    mkdir -p "$tmp/pass$pass/$(dirname "$f")"
    cp "$f" "$tmp/pass$pass/$f"
  done
done
[ $status -eq 0 ] || exit 1

for f in "${files[@]}"; do
  if ! cmp -s "$tmp/pass1/$f" "$tmp/pass2/$f"; then
    echo "GENERATOR IS NOT DETERMINISTIC: two runs wrote different $f" >&2
    diff -u "$tmp/pass1/$f" "$tmp/pass2/$f" | head -20 >&2 || true
    status=1
  elif ! cmp -s "$tmp/orig/$f" "$tmp/pass1/$f"; then
    echo "GENERATED FILE IS STALE OR HAND-EDITED: $f differs from what its generator writes ($(diff "$tmp/orig/$f" "$tmp/pass1/$f" | grep -c '^[<>]' || true) lines differ; first hunks, - committed + generated):" >&2
    diff -u "$tmp/orig/$f" "$tmp/pass1/$f" | head -30 >&2 || true
    status=1
  else
    echo "generated $f is up to date ($(wc -l <"$f") lines)"
  fi
done
if [ $status -ne 0 ]; then
  echo "Edit the generator, not its output; then run go generate ./${dirs[*]} (each directory) and commit both." >&2
fi
exit $status
