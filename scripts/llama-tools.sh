#!/usr/bin/env bash
# Sets up llama.cpp's quantizer for the real-file tests (internal/realfiles):
# builds ../shared/quantize into DIR and installs a writable copy of
# ../shared/ref (npm ci) whose prebuilt libllama the quantizer drives.
# Prints the environment to export, e.g.
#   eval "$(scripts/llama-tools.sh /tmp/llama-tools)"
# Needs cc, node and npm (npm registry access for node-llama-cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/llama-tools.sh DIR}
shared=${SHARED:-../shared}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sh "$shared/quantize/build.sh" "$dir/quantize" >&2
lib=$dir/ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so
if [ ! -f "$lib" ]; then
  rm -rf "$dir/ref"
  mkdir -p "$dir/ref"
  cp "$shared/ref/package.json" "$shared/ref/package-lock.json" "$shared/ref/ref.mjs" "$dir/ref/"
  (cd "$dir/ref" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
[ -f "$lib" ] || { echo "llama-tools: $lib missing after npm ci" >&2; exit 1; }
usage=$("$dir/quantize" 2>&1 || true)
case $usage in usage:*) ;; *) echo "llama-tools: $dir/quantize does not run: $usage" >&2; exit 1 ;; esac
echo "export MEMVANTA_QUANTIZE=$dir/quantize MEMVANTA_LIBLLAMA=$lib MEMVANTA_CACHE=$dir/cache MEMVANTA_REF=$dir/ref"
