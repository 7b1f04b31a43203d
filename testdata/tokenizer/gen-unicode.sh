#!/bin/sh
# Regenerates testdata/tokenizer/unicode-flags.txt: llama.cpp's codepoint
# category ranges and whitespace set (src/unicode-data.cpp of the llama.cpp
# release bundled with node-llama-cpp in REF_DIR), one "start category ws"
# line per run, so core/tokenizer can check its classification of every
# codepoint against llama.cpp's. Run from the repository root.
set -eu
REF_DIR=${REF_DIR:-/work/ref}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
git clone -q "$REF_DIR/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$TMP/llama.cpp" 2>/dev/null
python3 - "$TMP/llama.cpp/src/unicode-data.cpp" > testdata/tokenizer/unicode-flags.txt <<'PY'
import re, sys
src = open(sys.argv[1]).read()
def block(name):
    i = src.index(name); return src[i:src.index('};', i)]
ranges = [(int(a, 16), int(b, 16) & 0xFF) for a, b in re.findall(r'\{0x([0-9A-F]+), 0x([0-9A-F]+)\}', block('unicode_ranges_flags'))]
ws = {int(x, 16) for x in re.findall(r'0x([0-9A-F]+)', block('unicode_set_whitespace'))}
print("# llama.cpp unicode-data.cpp: start category(flag&0xFF) whitespace; a run lasts until the next start")
prev = None
for (start, cat), (end, _) in zip(ranges, ranges[1:]):
    cuts = sorted({start, end} | {w for w in ws if start <= w < end} | {w + 1 for w in ws if start <= w < end})
    for a, b in zip(cuts, cuts[1:]):
        key = (cat, int(a in ws))
        if key != prev:
            print(a, *key)
            prev = key
print(ranges[-1][0], 0, 0)
PY
echo "wrote testdata/tokenizer/unicode-flags.txt"
