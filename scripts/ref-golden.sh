#!/usr/bin/env bash
# Regenerates testdata/golden/*.json from llama.cpp (see testdata/golden/README.md).
# REF: directory of an installed ref.mjs harness (cd ../shared/ref copy; npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/refgolden -ref "${REF:-/work/ref}" -vocab ../shared/vocab -out testdata/golden "$@"
