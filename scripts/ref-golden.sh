#!/usr/bin/env bash
# Regenerates testdata/golden/*.json from llama.cpp (see testdata/golden/README.md).
# REF: directory of an installed ref.mjs harness (cd ../shared/ref copy; npm ci).
# The quant set also needs llama.cpp's quantizer: eval "$(scripts/llama-tools.sh DIR)"
# sets MEMVANTA_QUANTIZE/MEMVANTA_LIBLLAMA (and MEMVANTA_REF, usable as REF).
# Select sets/types with e.g. -sets quant -only Q4_K_M,Q6_K  or  -sets stories.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/refgolden -ref "${REF:-${MEMVANTA_REF:-/work/ref}}" -vocab ../shared/vocab -out testdata/golden "$@"
