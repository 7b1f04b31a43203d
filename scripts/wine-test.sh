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
# Wine 8.0 also answers FileDispositionInformationEx, with which Go's
# os.RemoveAll deletes files, with a status Go does not expect, so every
# t.TempDir cleanup failed ("Invalid function"). The test binaries are built
# with an -overlay of Go's internal/syscall/windows/at_windows.go that takes
# Go's own fallback (FileDispositionInformation, as before Windows 10 1607)
# on any such status. Nothing else of Go or memvanta is changed.
#
# Usage: [WINE_TEST_SKIP=regexp] scripts/wine-test.sh [--require] [package dirs...]
# (default: the platform layer, native/mmap native/regfile native/telemetry
# native/cache native/store native/prefetch native/hub; native/weights and
# cmd/memvanta also run, with the results docs/platforms.md records).
set -euo pipefail
cd "$(dirname "$0")/.."
require=0
if [ "${1:-}" = --require ]; then require=1; shift; fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(native/mmap native/regfile native/telemetry native/cache native/store native/prefetch native/hub)

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
at="$(go env GOROOT)/src/internal/syscall/windows/at_windows.go"
perl -0pe 's/(\tdefault:\n)\t\treturn err\.\(NTStatus\)\.Errno\(\)(\n\t\}\n\}\n\n\/\/ TestDeleteatFallback)/$1\t\treturn deleteatFallback(h)$2/' "$at" >"$dir/at_windows.go"
if cmp -s "$at" "$dir/at_windows.go"; then
  echo "wine-test: $at changed shape; update the overlay in $0" >&2; exit 1
fi
printf '{"Replace":{"%s":"%s"}}\n' "$at" "$dir/at_windows.go" >"$dir/overlay.json"
echo "wine-test: $("$wine" --version), Go $(go env GOVERSION) windows/amd64"

status=0
for p in "${pkgs[@]}"; do
  bin="$dir/$(basename "$p").test.exe"
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -overlay "$dir/overlay.json" -c -o "$bin" "./$p"
  [ -f "$bin" ] || { echo "--   $p (no test files)"; continue; }
  # Tests read testdata relative to their package directory.
  if (cd "$p" && timeout 1200 "$wine" "$bin" -test.count=1 -test.timeout 15m ${WINE_TEST_SKIP:+-test.skip "$WINE_TEST_SKIP"}) >"$dir/log" 2>&1; then
    echo "ok   $p (windows/amd64 under Wine)"
  else
    rc=$?; tail -80 "$dir/log"; echo "FAIL $p (windows/amd64 under Wine, exit $rc)"; status=1
  fi
done
exit $status
