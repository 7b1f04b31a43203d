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
# tree is restored as found whatever the outcome. Fix a failure with
#   go generate ./kernels && GOARCH=arm64 go generate ./kernels
# (every GOARCH below, in every directory listed) and commit the output;
# change the generator, never its output.
set -euo pipefail
cd "$(dirname "$0")/.."

# Directive-bearing files can be for one GOARCH only (gemmk512_amd64.go), and
# go generate reads only the files of the GOARCH it runs for.
goarches="amd64 arm64"
mapfile -t files < <(git ls-files -z | xargs -0 grep -lE '^// Code generated .* DO NOT EDIT\.$' -- 2>/dev/null |
  grep -v '^wasmhost/' | sort)
mapfile -t dirs < <(git ls-files -z '*.go' | xargs -0 grep -l '^//go:generate ' -- | grep -v '^wasmhost/' |
  xargs -n1 dirname | sort -u)
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
    for arch in $goarches; do
      if ! GOARCH=$arch go generate "./$d" >"$tmp/gen.log" 2>&1; then
        cat "$tmp/gen.log" >&2
        echo "GENERATOR FAILED: GOARCH=$arch go generate ./$d" >&2
        exit 1
      fi
    done
  done
  for f in "${files[@]}"; do
    if [ ! -f "$f" ]; then
      echo "NOT GENERATED: $f says it is generated, but no //go:generate directive in ${dirs[*]} (GOARCH $goarches) wrote it" >&2
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
  echo "Edit the generator, not its output; then run, in each of: ${dirs[*]}," >&2
  echo "  go generate for GOARCH=${goarches// /, GOARCH=} (e.g. GOARCH=arm64 go generate ./kernels) and commit." >&2
fi
exit $status
