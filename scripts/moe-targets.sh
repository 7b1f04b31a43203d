#!/usr/bin/env bash
# The mixture-of-experts target tables of issue 24 for one file: resident
# speed against llama.cpp, and speed under memory ceilings (memvanta
# --mem-budget against llama.cpp's mmap) with the read bound.
#
#   scripts/moe-targets.sh [-k avx2,avx512] [-R 2] [-p 512] [-n 128] [-t 2]
#                          [-c "8G 4G"] [--slack 640] [--nb 32] [--nref 8]
#                          [--states cold,warm] [--skip-resident] [--skip-ceilings]
#                          [-b MEMVANTA] [-o OUT.md] FILE
#
# Resident (file in the page cache): -R rounds, alternating which engine
# goes first, each a separate process under /usr/bin/time -v:
#   memvanta bench -p P -n N -r 1 (once per kernel path of -k)
#   node ref.mjs bench -p P -n N --reps 1 (llama.cpp's own CPU variant pick;
#   with avx2 in -k on an AVX-512 machine also a copy restricted to its AVX2
#   variants, as scripts/targets.sh does)
# Each figure is the best round; peak RSS the largest round's ru_maxrss.
#
# Ceilings (scripts/mem-sweep.sh: a fresh memory cgroup per run, swap off):
# for each ceiling C and state (cold: the file dropped from the page cache
# first, so every page either engine reads is charged to C; warm: the file
# in the page cache, charged to another group, so an mmap reader is only
# limited in its anonymous memory — recorded, but not a ceiling test):
#   memvanta bench -p 0 -n NB --mem-budget (C - SLACK MiB)   (default kernels)
#   node ref.mjs bench -p 0 -n NREF                          (mmap)
# The read bound is the file's measured read rate in that state (cold: dd
# iflag=direct of 2 GiB of it; warm: reading it from the page cache) over
# the expert bytes memvanta read per generated token (bench --json
# telemetry): the speed if reading missed experts were the only cost.
#
# Progress on stderr; the markdown tables on stdout (and -o); raw logs in
# $MEMVANTA_CACHE/moe-runs/<time>/. Needs node, python3, /usr/bin/time, root
# (cgroups), MEMVANTA_REF.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
kernels="" rounds=2 p=512 n=128 threads=2 ceilings="8G 4G" slack=640 nb=32 nref=8
states=cold,warm skip_res=0 skip_ceil=0 mv="" out=""
ref=$(cd "${MEMVANTA_REF:-/work/ref}" 2>/dev/null && pwd || echo "${MEMVANTA_REF:-/work/ref}")
die() { echo "moe-targets: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    -k) kernels=$2; shift 2 ;;
    -R) rounds=$2; shift 2 ;;
    -p) p=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -t) threads=$2; shift 2 ;;
    -c) ceilings=$2; shift 2 ;;
    --slack) slack=$2; shift 2 ;;
    --nb) nb=$2; shift 2 ;;
    --nref) nref=$2; shift 2 ;;
    --states) states=$2; shift 2 ;;
    --skip-resident) skip_res=1; shift ;;
    --skip-ceilings) skip_ceil=1; shift ;;
    -b) mv=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -h | --help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
    esac
done
[ $# = 1 ] || die "want one FILE (see -h)"
file=$(realpath "$1")
[ -r "$file" ] || die "$file: not readable"
[ -f "$ref/ref.mjs" ] || die "no ref.mjs in $ref (set MEMVANTA_REF)"
runs=${MEMVANTA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memvanta}/moe-runs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$runs"
if [ -z "$mv" ]; then
    mv=$runs/memvanta
    go build -o "$mv" ./cmd/memvanta
fi
IFS=, read -r -a klist <<<"${kernels:-default}"
IFS=, read -r -a slist <<<"$states"
reflist=(default)
if [[ ",${kernels}," == *,avx2,* ]] && grep -qw avx512f /proc/cpuinfo; then
    refavx2=$runs/ref-avx2
    bins=node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
    cp -al "$ref" "$refavx2" 2>/dev/null || cp -a "$ref" "$refavx2"
    for lib in "$refavx2/$bins"/libggml-cpu-*.so; do
        case ${lib##*/libggml-cpu-} in
        x64.so | sse42.so | sandybridge.so | ivybridge.so | piledriver.so | haswell.so) ;;
        *) rm -f "$lib" ;;
        esac
    done
    reflist+=(avx2)
fi
refdir() { if [ "$1" = avx2 ]; then echo "$refavx2"; else echo "$ref"; fi; }
t0=$(date +%s)
log() { printf '[%s +%ds] %s\n' "$(date +%H:%M:%S)" $(($(date +%s) - t0)) "$*" >&2; }
{
    echo "file=$file"
    echo "size=$(stat -c %s "$file")"
    echo "p=$p n=$n nb=$nb nref=$nref threads=$threads rounds=$rounds slack=$slack"
    echo "memvanta=$("$mv" version 2>&1 | head -1)"
    echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$runs/settings.txt"
: >"$runs/index.tsv" # kind \t state \t ceiling \t engine \t kernels \t round \t run name

run() { # name kernels CMD...
    local name=$1 kp=$2
    shift 2
    log "$name: $*"
    env ${kp:+MEMVANTA_KERNELS=$kp} /usr/bin/time -v -o "$runs/$name.time" "$@" >"$runs/$name.json" 2>"$runs/$name.err" ||
        { tail -5 "$runs/$name.err" >&2; die "$name failed (log $runs/$name.err)"; }
}

if [ $skip_res = 0 ]; then
    log "warming the page cache with $file"
    cat "$file" >/dev/null
    for r in $(seq 1 "$rounds"); do
        mvside() {
            for kp in "${klist[@]}"; do
                k=$kp; [ "$kp" = default ] && k=""
                run "res-r$r-mv-$kp" "$k" "$mv" bench --json -t "$threads" -m "$file" -p "$p" -n "$n" -r 1
                printf 'res\twarm\t-\tmemvanta\t%s\t%s\tres-r%s-mv-%s\n' "$kp" "$r" "$r" "$kp" >>"$runs/index.tsv"
            done
        }
        refside() {
            for rk in "${reflist[@]}"; do
                run "res-r$r-ref-$rk" "" node "$(refdir "$rk")/ref.mjs" bench "$file" -p "$p" -n "$n" --reps 1 --threads "$threads"
                printf 'res\twarm\t-\tllama.cpp\t%s\t%s\tres-r%s-ref-%s\n' "$rk" "$r" "$r" "$rk" >>"$runs/index.tsv"
            done
        }
        if [ $((r % 2)) = 1 ]; then mvside; refside; else refside; mvside; fi
    done
fi

if [ $skip_ceil = 0 ]; then
    # Read rates: cold from the disk (O_DIRECT, 2 GiB from the middle of
    # the file), warm from the page cache (the whole file, read twice).
    size=$(stat -c %s "$file")
    dd if="$file" iflag=nocache count=0 status=none 2>/dev/null || true
    skip=$((size / 2 / (4 << 20)))
    cold_rate=$(dd if="$file" of=/dev/null bs=4M count=512 skip="$skip" iflag=direct 2>&1 | awk '/copied/{for(i=1;i<=NF;i++) if($i ~ /^s,$/) s=$(i-1); print $1/s}')
    cat "$file" >/dev/null
    s0=$(date +%s.%N)
    cat "$file" >/dev/null
    s1=$(date +%s.%N)
    warm_rate=$(awk -v a="$s0" -v b="$s1" -v n="$size" 'BEGIN{print n/(b-a)}')
    echo "cold_rate=$cold_rate" >>"$runs/settings.txt"
    echo "warm_rate=$warm_rate" >>"$runs/settings.txt"
    log "read rates: cold $(awk -v r="$cold_rate" 'BEGIN{printf "%.2f", r/1e9}') GB/s, warm $(awk -v r="$warm_rate" 'BEGIN{printf "%.2f", r/1e9}') GB/s"
    for c in $ceilings; do
        cm=$(numfmt --from=iec "$c")
        budget=$((cm / 1048576 - slack))MiB
        for st in "${slist[@]}"; do
            cold=()
            [ "$st" = cold ] && cold=(--cold "$file")
            [ "$st" = warm ] && cat "$file" >/dev/null
            scripts/mem-sweep.sh -c "$c" "${cold[@]}" -t 1800 --log "$runs" --label "ceil-$st-mv" -- \
                "$mv" bench --json -t "$threads" -m "$file" -p 0 -n "$nb" -r 1 --mem-budget "$budget" >>"$runs/ceilings.tsv"
            printf 'ceil\t%s\t%s\tmemvanta\t%s\t1\tceil-%s-mv-%s\n' "$st" "$c" "$budget" "$st" "$c" >>"$runs/index.tsv"
            [ "$st" = warm ] && cat "$file" >/dev/null
            scripts/mem-sweep.sh -c "$c" "${cold[@]}" -t 1800 --log "$runs" --label "ceil-$st-ref" -- \
                node "$ref/ref.mjs" bench "$file" -p 0 -n "$nref" --reps 1 --threads "$threads" >>"$runs/ceilings.tsv"
            printf 'ceil\t%s\t%s\tllama.cpp\tmmap\t1\tceil-%s-ref-%s\n' "$st" "$c" "$st" "$c" >>"$runs/index.tsv"
            log "ceiling $c $st: $(tail -2 "$runs/ceilings.tsv" | cut -f3,5,6 | tr '\n' ' ')"
        done
    done
fi
log "done; tabulating"
python3 "$root/scripts/moe-targets-table.py" "$runs" | tee "$runs/table.md" ${out:+"$out"}
log "raw results in $runs"
