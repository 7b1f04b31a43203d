#!/usr/bin/env bash
# Runs the kernels package's tests for GOARCH=arm64 under qemu-aarch64, so the
# NEON paths are checked against the scalar reference on an amd64 host. The
# Go test binary is static, so no arm64 sysroot is needed. Extra arguments are
# passed to the test binary; the default runs the whole kernels suite (the
# SIMD-vs-scalar differential tests plus the scalar, golden and matvec tests,
# about 60 s under emulation, then the kernel comparisons again on a CPU
# without the dot-product extension), e.g. pass -test.run SIMD for just the
# NEON comparison on the default CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v qemu-aarch64 >/dev/null 2>&1; then
  echo "qemu-aarch64 not found; installing qemu-user" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq qemu-user
fi

bin=$(mktemp -d)/kernels.arm64.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$bin" ./kernels
default=0
if [ $# -eq 0 ]; then set -- -test.v; default=1; fi
# The tests read ../shared relative to the package directory; run from there.
cd kernels
# qemu-aarch64's default CPU ("max") has the dot-product extension, so the
# SDOT routines are dispatched and the ARMv8.0 ones are checked through the
# tests' extra table; the default run then repeats the kernel comparisons on
# a CPU without it (cortex-a53), where the ARMv8.0 routines are dispatched.
qemu-aarch64 "$bin" "$@"
if [ "$default" -eq 1 ]; then
  echo "== again on -cpu cortex-a53 (no ASIMDDP): SIMD, four-row, MatVec, MatMul tests" >&2
  qemu-aarch64 -cpu cortex-a53 "$bin" -test.run 'SIMD|Dot4|Rows4|FourRow|MatVec|MatMul|Gemm'
fi
