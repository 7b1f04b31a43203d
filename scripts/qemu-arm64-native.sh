#!/usr/bin/env bash
# Runs the linux/arm64 tests of the platform layer (native/: mapping and
# page hints, regular-file checks, telemetry, cache buffers, store, prefetch,
# hub locking and renames) under qemu-aarch64, so the arm64 build of every
# system call it makes is exercised on an amd64 host. The kernels have their
# own run (qemu-arm64-test.sh). Pass package names to choose (default: the
# fast ones; add weights for the model-level tests, ~3 min under emulation).
#
# Skipped under qemu-user, which cannot host them:
#   - the truncation-fault tests: qemu-user delivers the guest's SIGBUS with
#     si_addr 0, so Go's runtime sees a nil dereference instead of a fault at
#     an address and SetPanicOnFault's recovery cannot be checked (the same
#     tests run natively on amd64, with the same arm64-independent code);
#   - TestBudgetBoundsRSS, which re-executes the test binary: without
#     binfmt_misc the host cannot exec an arm64 binary.
# PAGEMAP_SCAN answers ENOSYS under qemu-user, which native/mmap treats as
# "cannot scan" (TestHugeRanges skips, saying so).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 not found (apt-get install qemu-user)" >&2; exit 1; }
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(mmap regfile telemetry cache store prefetch hub)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
skip='^(TestTruncatedUnderMapping|TestAlignedMapping|TestTruncatedFile|TestTruncatedDuringForward|TestBudgetBoundsRSS)$'
status=0
for p in "${pkgs[@]}"; do
  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$dir/$p.test" "./native/$p"
  # Tests read testdata relative to their package directory.
  if (cd "native/$p" && qemu-aarch64 "$dir/$p.test" -test.count=1 -test.skip "$skip" >"$dir/$p.log" 2>&1); then
    echo "ok   native/$p (linux/arm64 under qemu)"
  else
    cat "$dir/$p.log"; echo "FAIL native/$p (linux/arm64 under qemu)"; status=1
  fi
done
exit $status
