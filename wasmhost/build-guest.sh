#!/bin/sh
# Builds a sandbox guest reproducibly: the same source and toolchain give
# the same bytes on any machine, so CI can tell a stale committed .wasm from
# a fresh one with a byte compare. Every setting that can reach the output
# is pinned here rather than inherited from the caller's environment. The
# Go build's tens of thousands of data segments are then packed into a few
# (internal/wasmpack: same memory image, less per-start work for wazero).
# Usage: build-guest.sh OUTPUT [PACKAGE]   (run from anywhere)
#   PACKAGE is relative to wasmhost/: ./guest (the default, every job) or
#   ./inspectguest (inspect only).
set -eu
out=${1:?usage: build-guest.sh OUTPUT [PACKAGE]}
pkg=${2:-./guest}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env -u GOFLAGS -u GOEXPERIMENT CGO_ENABLED=0 GOOS=wasip1 GOARCH=wasm GOWASM= GOWORK=off GOTOOLCHAIN=local \
	go build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$tmp/guest.wasm" "$pkg"
env -u GOFLAGS -u GOOS -u GOARCH GOWORK=off GOTOOLCHAIN=local go run ./internal/wasmpack "$tmp/guest.wasm" "$out"
