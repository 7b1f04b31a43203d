#!/usr/bin/env bash
# Runs windows/amd64 test binaries under Wine: the Windows platform code
# (CreateFileMapping/MapViewOfFile, PrefetchVirtualMemory, VirtualUnlock,
# VirtualAlloc, GetProcessMemoryInfo, LockFileEx, rename over an open file,
# the device-path and pipe checks) runs on this Linux host. Wine is not
# Windows: passing here shows the calls are made as documented and the
# logic around them holds under Wine's implementation of them, not that
# Windows behaves the same (docs/platforms.md says what was run where).
#
# Needs wine64 and x86_64-w64-mingw32-gcc; without them it says so and
# exits 0 (pass --require to fail instead). Debian 12's Wine 8.0 lacks
# bcryptprimitives.dll, without which no Go >= 1.22 program starts; a
# ProcessPrng shim (scripts/wine/bcryptprimitives.c) is built into a
# throwaway Wine prefix's System32.
#
# Wine 8.0 also lacks FileDispositionInformationEx, which Go's os.RemoveAll
# uses, so t.TempDir's cleanup fails ("Invalid function") for every test
# that left files in it; a test whose only failure messages are those is
# counted as passed (its body passed) and listed as such.
#
# Usage: scripts/wine-test.sh [--require] [package dirs...]
# (default: native/mmap native/regfile native/telemetry native/cache
# native/store native/prefetch native/hub native/weights cmd/memvanta)
set -euo pipefail
cd "$(dirname "$0")/.."
require=0
if [ "${1:-}" = --require ]; then require=1; shift; fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(native/mmap native/regfile native/telemetry native/cache native/store native/prefetch native/hub native/weights cmd/memvanta)

wine=""
for w in wine64 /usr/lib/wine/wine64 wine; do
  if command -v "$w" >/dev/null 2>&1; then wine=$(command -v "$w"); break; fi
done
cc=x86_64-w64-mingw32-gcc
if [ -z "$wine" ] || ! command -v "$cc" >/dev/null 2>&1; then
  echo "wine-test: skipped (needs wine64 and $cc: apt-get install wine64 gcc-mingw-w64-x86-64)"
  exit $((require))
fi
wineserver=$(dirname "$(readlink -f "$wine")")/wineserver
[ -x "$wineserver" ] || wineserver=$(command -v wineserver || echo wineserver)

dir=$(mktemp -d)
export WINEPREFIX="$dir/prefix" WINEDEBUG=-all
cleanup() { "$wineserver" -k >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"$wine" wineboot -i >"$dir/wineboot.log" 2>&1 || { cat "$dir/wineboot.log"; exit 1; }
"$cc" -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -lbcrypt
echo "wine-test: $("$wine" --version), Go $(go env GOVERSION) windows/amd64"

status=0
for p in "${pkgs[@]}"; do
  bin="$dir/$(basename "$p").test.exe"
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -c -o "$bin" "./$p"
  [ -f "$bin" ] || { echo "--   $p (no test files)"; continue; }
  rc=0
  (cd "$p" && timeout 1200 "$wine" "$bin" -test.count=1 -test.timeout 15m) >"$dir/log" 2>&1 || rc=$?
  # real: failure messages other than Wine's t.TempDir cleanup error, or a panic.
  read -r real cleanup < <(awk '
    /^ *--- FAIL: / { infail = 1; next }
    /^ *--- (PASS|SKIP): / { infail = 0; next }
    /TempDir RemoveAll cleanup: .*Invalid function\.$/ { c++; next }
    /^panic:|^fatal error:/ { r++; next }
    infail && /^    / { r++ }
    END { print r + 0, c + 0 }' "$dir/log")
  if [ "$rc" -eq 0 ]; then
    echo "ok   $p (windows/amd64 under Wine)"
  elif [ "$real" -eq 0 ] && [ "$cleanup" -gt 0 ]; then
    echo "ok   $p (windows/amd64 under Wine; $cleanup t.TempDir cleanups failed on Wine's missing FileDispositionInformationEx:" \
      "$(grep -oE '^ *--- FAIL: [^ ]+' "$dir/log" | awk '{print $3}' | tr '\n' ' '))"
  else
    grep -v 'TempDir RemoveAll cleanup' "$dir/log" | tail -60
    echo "FAIL $p (windows/amd64 under Wine, exit $rc)"; status=1
  fi
done
exit $status
