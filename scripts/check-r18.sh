#!/usr/bin/env bash
# Fails if arm64 assembly touches R18, the platform register that macOS and
# Windows reserve (the OS may change it at any time). Go's assembler already
# rejects the name R18 (only R18_PLATFORM spells it), so this checks the
# source for R18_PLATFORM and the built code, which also covers hand-encoded
# WORD instructions: every instruction of package kernels' arm64 test binary,
# disassembled in Go and GNU syntax, must name neither R18 nor x18/w18.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
if grep -nE '\bR18(_PLATFORM)?\b' $(git ls-files '*arm64*.s' '*arm64*.h'); then
  echo "R18 CHECK FAILED: arm64 assembly names R18" >&2; status=1
fi
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$bin" ./kernels
hits=$(go tool objdump -gnu -s '^github.com/memvanta/memvanta/kernels\.' "$bin" | grep -E '\bR18\b|\b[xw]18\b' || true)
if [ -n "$hits" ]; then
  echo "R18 CHECK FAILED: instructions using R18 in kernels:" >&2; echo "$hits" | head -20 >&2; status=1
fi
[ $status -eq 0 ] && echo "R18 check: no arm64 instruction in kernels/ uses R18"
exit $status
