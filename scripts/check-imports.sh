#!/usr/bin/env bash
# Fails loudly if the platform-neutral core (core/... and the portable part of
# kernels) depends on anything that would tie it to one OS or to the native
# runtime. Checked for GOOS=wasip1 GOARCH=wasm and for the native target:
#   - no package of ours under core/ or kernels/ imports syscall or os/exec
#     directly (the standard library's own use of syscall is fine);
#   - nothing under core/ (or kernels/ in the wasm build) depends, even
#     transitively, on golang.org/x/sys, native/ or wasmhost/.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
direct='^(syscall|os/exec)$'
transitive="^(golang.org/x/sys(/.*)?|$mod/native(/.*)?|$mod/wasmhost(/.*)?)$"
status=0
fail() { echo "IMPORT CHECK FAILED: $*" >&2; status=1; }
check() { # $1 = label, $2 = package patterns, rest = env
  local label=$1 patterns=$2; shift 2
  local p bad
  for p in $(env "$@" go list $patterns); do
    bad=$(env "$@" go list -f '{{join .Imports "\n"}}' "$p" | grep -E "$direct" || true)
    [ -z "$bad" ] || fail "($label) $p imports $(echo $bad)"
    bad=$(env "$@" go list -deps -f '{{.ImportPath}}' "$p" | grep -E "$transitive" || true)
    [ -z "$bad" ] || fail "($label) $p depends on $(echo $bad)"
  done
}
check wasip1 "./core/... ./kernels/..." GOOS=wasip1 GOARCH=wasm
check native "./core/..."
[ $status -eq 0 ] && echo "import check: core/ and portable kernels/ are platform-neutral (native and wasip1)"
exit $status
