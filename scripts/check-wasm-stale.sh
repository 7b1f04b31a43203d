#!/usr/bin/env bash
# Fails if a committed sandbox guest (wasmhost/guest.wasm, the full guest,
# and wasmhost/inspect.wasm, the inspect-only one; both embedded in the
# memvanta binary) is not what its source builds to today, or if its
# generated SHA-256 constant is out of date. The guest build is reproducible
# (wasmhost/build-guest.sh pins every setting that reaches the bytes), so a
# byte compare is the whole test. Fix a failure with
#   go generate ./wasmhost/...
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# wasm file, guest package (relative to wasmhost/), sum file
while read -r wasm pkg sumfile; do
  ./wasmhost/build-guest.sh "$tmp/fresh.wasm" "$pkg"
  ./wasmhost/build-guest.sh "$tmp/again.wasm" "$pkg"
  if ! cmp -s "$tmp/fresh.wasm" "$tmp/again.wasm"; then
    echo "WASM GUEST BUILD IS NOT REPRODUCIBLE: two builds of $pkg differ" >&2
    status=1
    continue
  fi
  if ! cmp -s "$tmp/fresh.wasm" "wasmhost/$wasm"; then
    echo "WASM GUEST IS STALE: wasmhost/$wasm ($(wc -c <"wasmhost/$wasm") bytes) differs from a fresh build of $pkg ($(wc -c <"$tmp/fresh.wasm") bytes)." >&2
    echo "Run: go generate ./wasmhost/... and commit wasmhost/*.wasm wasmhost/*_sum.go" >&2
    status=1
    continue
  fi
  want=$(sha256sum "wasmhost/$wasm" | cut -d' ' -f1)
  if ! grep -q "\"$want\"" "wasmhost/$sumfile"; then
    echo "WASM GUEST SUM IS STALE: wasmhost/$sumfile does not hold $want. Run: go generate ./wasmhost/..." >&2
    status=1
    continue
  fi
  echo "wasm guest $wasm is up to date ($(wc -c <"wasmhost/$wasm") bytes, sha256 ${want:0:16})"
done <<'LIST'
guest.wasm ./guest guest_sum.go
inspect.wasm ./inspectguest inspect_sum.go
LIST
# The inspect guest must not link kernel or model code (it would be larger
# and go stale whenever they change): it may link only these packages of
# ours (the same allow-list as wasmhost/guests_test.go).
bad=$(cd wasmhost && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go list -deps ./inspectguest |
  grep -E '^github.com/memvanta/memvanta/' |
  grep -vxE 'github.com/memvanta/memvanta/(core/ggml|core/gguf|core/inspect|core/arch|wasmhost/job|wasmhost/internal/guestmain|wasmhost/inspectguest)' || true)
if [ -n "$bad" ]; then
  echo "THE INSPECT GUEST LINKS: $bad" >&2
  status=1
fi
exit $status
