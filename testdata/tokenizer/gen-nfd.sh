#!/bin/sh
# Regenerates the WordPiece normaliser's decomposition table and its check.
#
# core/tokenizer/nfd_table.go maps each codepoint to the first codepoint of
# its canonical decomposition (NFD), which is all llama.cpp's BERT
# normaliser uses of NFD: the base letter survives and the marks it would
# decompose into are dropped anyway. The table comes from Python's
# unicodedata, an independent source; testdata/tokenizer/unicode-nfd.txt is
# llama.cpp's own table (src/unicode-data.cpp of the release bundled with
# node-llama-cpp in REF_DIR), which TestNFDMatchesLlamaCpp compares against
# for every codepoint. Run from the repository root.
set -eu
REF_DIR=${REF_DIR:-/work/ref}
python3 - > core/tokenizer/nfd_table.go <<'PY'
import unicodedata
r = []
for c in range(0x110000):
    if 0xD800 <= c < 0xE000:
        continue
    n = ord(unicodedata.normalize('NFD', chr(c))[0])
    if n == c:
        continue
    if r and r[-1][1] == c - 1 and r[-1][2] == n:
        r[-1][1] = c
    else:
        r.append([c, c, n])
print("// Code produced by testdata/tokenizer/gen-nfd.sh from Python's unicodedata %s." % unicodedata.unidata_version)
print("// Change the script, not this file.")
print()
print("package tokenizer")
print()
print("// nfdFirst lists runs of codepoints whose canonical decomposition starts")
print("// with the same codepoint: {first, last, decomposition's first codepoint}.")
print("var nfdFirst = [...][3]int32{")
for i in range(0, len(r), 4):
    print("\t" + " ".join("{0x%X, 0x%X, 0x%X}," % tuple(x) for x in r[i:i+4]))
print("}")
PY
gofmt -w core/tokenizer/nfd_table.go
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
git clone -q "$REF_DIR/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$TMP/llama.cpp" 2>/dev/null
python3 - "$TMP/llama.cpp/src/unicode-data.cpp" > testdata/tokenizer/unicode-nfd.txt <<'PY'
import re, sys
src = open(sys.argv[1]).read()
i = src.index('unicode_ranges_nfd')
block = src[i:src.index('};', i)]
print("# llama.cpp unicode-data.cpp unicode_ranges_nfd: first last nfd (decimal)")
for a, b, n in re.findall(r'\{0x([0-9A-F]+), 0x([0-9A-F]+), 0x([0-9A-F]+)\}', block):
    print(int(a, 16), int(b, 16), int(n, 16))
PY
echo "wrote core/tokenizer/nfd_table.go testdata/tokenizer/unicode-nfd.txt"
