#!/usr/bin/env bash
# Fails if the committed sandbox guest (wasmhost/guest.wasm, embedded in the
# memvanta binary) is not what its source builds to today. The guest build is
# reproducible (wasmhost/build-guest.sh pins every setting that reaches the
# bytes), so a byte compare is the whole test. Fix a failure with
#   go generate ./wasmhost/...
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
./wasmhost/build-guest.sh "$tmp/guest.wasm"
./wasmhost/build-guest.sh "$tmp/again.wasm"
if ! cmp -s "$tmp/guest.wasm" "$tmp/again.wasm"; then
  echo "WASM GUEST BUILD IS NOT REPRODUCIBLE: two builds differ" >&2
  exit 1
fi
if ! cmp -s "$tmp/guest.wasm" wasmhost/guest.wasm; then
  echo "WASM GUEST IS STALE: wasmhost/guest.wasm ($(wc -c <wasmhost/guest.wasm) bytes) differs from a fresh build ($(wc -c <"$tmp/guest.wasm") bytes)." >&2
  echo "Run: go generate ./wasmhost/... and commit wasmhost/guest.wasm" >&2
  exit 1
fi
want=$(sha256sum wasmhost/guest.wasm | cut -d' ' -f1)
if ! grep -q "\"$want\"" wasmhost/guest_sum.go; then
  echo "WASM GUEST SUM IS STALE: wasmhost/guest_sum.go does not hold $want. Run: go generate ./wasmhost/..." >&2
  exit 1
fi
echo "wasm guest is up to date ($(wc -c <wasmhost/guest.wasm) bytes, sha256 $(sha256sum wasmhost/guest.wasm | cut -c1-16))"
