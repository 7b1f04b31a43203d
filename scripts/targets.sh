#!/usr/bin/env bash
# The speed-target table of issue 13: memvanta against llama.cpp on
# TinyLlama-shaped files quantized by llama.cpp's own quantizer.
#
#   scripts/targets.sh [-C CACHE] [-k avx2[,avx512]] [-T Q4_K_M,...] [-R 2] [-r 2] [-rd 1]
#                      [-p 512] [-n 128] [-d 2048] [-t 2] [-b MEMVANTA] [-o OUT.md]
#                      [--shape "SYNTH FLAGS"] [--7b] [--7b-shape "SYNTH FLAGS"] [--7b-n 16] [--prepare]
#
# Files: `memvanta synth --type F16` (TinyLlama's dimensions unless --shape,
# the real llama SPM vocabulary, seed 1) quantized by llama.cpp's quantizer
# ($MEMVANTA_QUANTIZE --lib $MEMVANTA_LIBLLAMA, its default per-tensor mix) to
# each type of -T, kept in CACHE (default $MEMVANTA_CACHE/targets, else
# ~/.cache/memvanta/targets) and reused on later runs. File names carry a hash
# of the synth flags and of core/synth's git tree, so a changed generator
# never reuses a stale file. --prepare only makes the files (do it ahead of
# a timed run: the first one takes minutes of synth and quantization).
#
# -d 0 leaves out the depth tests. -k avxvnni (with avx2, on an AVX-512
# machine) adds llama.cpp restricted to its variants up to alderlake.
# Per file and round (-R rounds), alternating the engines (memvanta first in
# odd rounds, llama.cpp first in even ones), each a separate process under
# /usr/bin/time -v, every memvanta process once per kernel path of -k
# (MEMVANTA_KERNELS; default: the path the CPU selects):
#   depth 0:  memvanta bench -p P -n N -r REPS  |  node ref.mjs bench -p P -n N --reps REPS
#   depth D:  memvanta bench -p P -n N -d D -r RD  |  node scripts/ref-bench.mjs REF -p P -n N -d D -r RD
# (-rd RD repetitions, default 1: the D-token prefill is most of a depth
# process's time, and each round is already a separate measurement)
# Each test's figure is the best round's mean over the repetitions (the
# least-disturbed round on a shared machine), llama.cpp timed by its own
# llama_perf counters; peak RSS is the largest round's ru_maxrss of the
# depth-0 process (both engines sized for P/N tokens of context).
# llama.cpp picks the best of its CPU variants for the machine. When -k
# includes avx2 on an AVX-512 machine, memvanta's avx2 path is the proxy for
# an AVX2-only CPU, so it is compared against llama.cpp restricted to its
# AVX2 variants: a copy of the reference install (CACHE/ref-avx2, hard links)
# without the AVX-512 libggml-cpu variants, which then loads haswell (AVX2,
# FMA, F16C). Those llama.cpp processes run beside the default ones in every
# round; the table names the variant each loaded (ref.mjs's log_notable),
# and lists the avx2 path's ratios against the default build too.
# --7b adds 7B-shaped Q4_K_M and Q4_0 files (by default --embd 4096
# --layers 32 --heads 32 --kv-heads 32 --ff 11008: a 13.5 GB F16 source):
# tgN at -c 512, memvanta resident and --mem-budget 512MiB against llama.cpp.
#
# Prints progress on stderr and the markdown table on stdout (and to -o);
# raw JSON and time logs stay in CACHE/runs/<time>/.
# Needs: go (unless -b), node, python3, /usr/bin/time, MEMVANTA_QUANTIZE,
# MEMVANTA_LIBLLAMA, MEMVANTA_REF (default /work/ref: ref.mjs with node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

cache=${MEMVANTA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memvanta}/targets
kernels=""
types=Q4_K_M,Q5_K_M,Q6_K,Q8_0,Q4_0,IQ4_XS
rounds=2 reps=2 dreps=1 p=512 n=128 depth=2048 threads=2
mv="" out="" shape="" big=0 n7=16 prepare=0
shape7="--embd 4096 --layers 32 --heads 32 --kv-heads 32 --ff 11008"
ref=$(cd "${MEMVANTA_REF:-/work/ref}" 2>/dev/null && pwd || echo "${MEMVANTA_REF:-/work/ref}")
vocab=${SHARED:-../shared}/vocab/ggml-vocab-llama-spm.gguf
die() { echo "targets: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    -C) cache=$2; shift 2 ;;
    -k) kernels=$2; shift 2 ;;
    -T) types=$2; shift 2 ;;
    -R) rounds=$2; shift 2 ;;
    -r) reps=$2; shift 2 ;;
    -rd) dreps=$2; shift 2 ;;
    -p) p=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -d) depth=$2; shift 2 ;;
    -t) threads=$2; shift 2 ;;
    -b) mv=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --shape) shape=$2; shift 2 ;;
    --7b) big=1; shift ;;
    --prepare) prepare=1; shift ;;
    --7b-shape) shape7=$2; shift 2 ;;
    --7b-n) n7=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (-h for help)" ;;
    esac
done
for v in rounds reps dreps p n depth threads n7; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "-$v ${!v}: want a non-negative integer"
done
[ "$rounds" -ge 1 ] && [ "$reps" -ge 1 ] && [ "$dreps" -ge 1 ] || die "-R, -r and -rd must be >= 1"
[ -n "${MEMVANTA_QUANTIZE:-}" ] && [ -x "$MEMVANTA_QUANTIZE" ] || die "MEMVANTA_QUANTIZE must name llama.cpp's quantize binary (see TEAM.md / scripts/llama-tools.sh)"
[ -n "${MEMVANTA_LIBLLAMA:-}" ] && [ -f "$MEMVANTA_LIBLLAMA" ] || die "MEMVANTA_LIBLLAMA must name libllama.so"
[ -f "$ref/ref.mjs" ] && [ -d "$ref/node_modules" ] || die "MEMVANTA_REF=$ref: no ref.mjs with node_modules"
[ -f "$vocab" ] || die "$vocab missing (SHARED=dir holding vocab/)"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian package time)"

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
runs=$cache/runs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$runs"
if [ -z "$mv" ]; then
    mv=$runs/memvanta
    go build -o "$mv" ./cmd/memvanta
fi
IFS=, read -r -a typelist <<<"$types"
IFS=, read -r -a klist <<<"${kernels:-default}"
# reflist: the llama.cpp installs each round runs ("default" = $ref).
reflist=(default)
if [[ ",${kernels}," == *,avx2,* ]] && grep -qw avx512f /proc/cpuinfo; then
    refavx2=$cache/ref-avx2
    bins=node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
    if [ ! -f "$refavx2/ref.mjs" ] || [ "$ref/ref.mjs" -nt "$refavx2/ref.mjs" ]; then
        rm -rf "$refavx2"
        cp -al "$ref" "$refavx2" 2>/dev/null || cp -a "$ref" "$refavx2"
    fi
    for lib in "$refavx2/$bins"/libggml-cpu-*.so; do
        case ${lib##*/libggml-cpu-} in
        x64.so | sse42.so | sandybridge.so | ivybridge.so | piledriver.so | haswell.so) ;;
        *) rm -f "$lib" ;;
        esac
    done
    [ -f "$refavx2/$bins/libggml-cpu-haswell.so" ] || die "$refavx2: no libggml-cpu-haswell.so to compare the avx2 path against"
    reflist+=(avx2)
fi
# memvanta's avxvnni path (AVX2 + AVX-VNNI, for Alder Lake and later) is
# compared against llama.cpp restricted the same way to its variants up to
# alderlake (AVX2 + AVX-VNNI), which then loads alderlake.
if [[ ",${kernels}," == *,avxvnni,* ]] && grep -qw avx512f /proc/cpuinfo; then
    refvnni=$cache/ref-alderlake
    bins=node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
    if [ ! -f "$refvnni/ref.mjs" ] || [ "$ref/ref.mjs" -nt "$refvnni/ref.mjs" ]; then
        rm -rf "$refvnni"
        cp -al "$ref" "$refvnni" 2>/dev/null || cp -a "$ref" "$refvnni"
    fi
    for lib in "$refvnni/$bins"/libggml-cpu-*.so; do
        case ${lib##*/libggml-cpu-} in
        x64.so | sse42.so | sandybridge.so | ivybridge.so | piledriver.so | haswell.so | alderlake.so) ;;
        *) rm -f "$lib" ;;
        esac
    done
    [ -f "$refvnni/$bins/libggml-cpu-alderlake.so" ] || die "$refvnni: no libggml-cpu-alderlake.so to compare the avxvnni path against"
    reflist+=(avxvnni)
fi
refdir() {
    case $1 in
    avx2) echo "$refavx2" ;;
    avxvnni) echo "$refvnni" ;;
    *) echo "$ref" ;;
    esac
}
t0=$(date +%s)
log() { printf '[%s +%ds] %s\n' "$(date +%H:%M:%S)" $(($(date +%s) - t0)) "$*" >&2; }

# synth_src FLAGS... -> path of the F16 source made with those synth flags.
synth_src() {
    local key
    key=$( (printf '%s\n' "$@"; git rev-parse HEAD:core/synth 2>/dev/null || echo nogit) | sha256sum | cut -c1-12)
    local f=$cache/src-$key-F16.gguf
    if [ ! -f "$f" ]; then
        log "synth F16 source $f ($*)"
        "$mv" synth -q -o "$f.tmp$$" --type F16 --vocab-from "$vocab" --seed 1 "$@" >&2
        mv "$f.tmp$$" "$f"
    fi
    echo "$f"
}
# quantized SRC TYPE -> path of SRC quantized by llama.cpp to TYPE.
quantized() {
    local f=${1%-F16.gguf}-$2.gguf
    if [ ! -f "$f" ]; then
        log "quantize $2 -> $f"
        local im=()
        case $2 in
        IQ1_* | IQ2_* | IQ3_* | Q2_K_S)
            # As internal/realfiles.NeedsImatrix: a uniform importance matrix.
            python3 "${SHARED:-../shared}/quantize/imatrix-list.py" "$1" >"$f.imatrix"
            im=(--imatrix "$f.imatrix") ;;
        esac
        "$MEMVANTA_QUANTIZE" --lib "$MEMVANTA_LIBLLAMA" --threads "$threads" "${im[@]}" "$1" "$f.tmp$$" "$2" >"$f.log" 2>&1 ||
            { tail -5 "$f.log" >&2; die "quantize $2 failed (log $f.log)"; }
        mv "$f.tmp$$" "$f"
    fi
    echo "$f"
}

# run NAME KERNELS CMD... : CMD under /usr/bin/time -v, stdout to NAME.json.
# Progress: measuring processes done out of total (set once the files are
# ready) and an estimate of the time left from the mean so far.
done_n=0 total_n=0 tmeas=0
run() {
    local name=$1 kp=$2
    shift 2
    local eta=""
    if [ "$done_n" -gt 0 ] && [ "$total_n" -gt 0 ]; then
        eta=" (~$(((($(date +%s) - tmeas) * (total_n - done_n) / done_n + 59) / 60)) min left)"
    fi
    log "[$((done_n + 1))/$total_n]$eta $name: $*"
    done_n=$((done_n + 1))
    if [ "$kp" = default ]; then
        /usr/bin/time -v -o "$runs/$name.time" "$@" >"$runs/$name.json" 2>"$runs/$name.err" || { tail -5 "$runs/$name.err" >&2; die "$name failed (log $runs/$name.err)"; }
    else
        MEMVANTA_KERNELS=$kp /usr/bin/time -v -o "$runs/$name.time" "$@" >"$runs/$name.json" 2>"$runs/$name.err" || { tail -5 "$runs/$name.err" >&2; die "$name failed (log $runs/$name.err)"; }
    fi
}
mvrun() { # name kernels bench-args...
    local name=$1 kp=$2
    shift 2
    run "$name" "$kp" "$mv" bench -t "$threads" --json "$@"
}
refrun() { # name refkind ref.mjs-args...
    local name=$1 rk=$2
    shift 2
    run "$name" default node "$(refdir "$rk")/ref.mjs" "$@"
}

src=$(synth_src ${shape:+$shape})
files=()
for ty in "${typelist[@]}"; do
    files+=("$(quantized "$src" "$ty")")
done
big_files=()
if [ "$big" = 1 ]; then
    # shellcheck disable=SC2086
    src7=$(synth_src $shape7)
    big_files=("$(quantized "$src7" Q4_K_M)" "$(quantized "$src7" Q4_0)")
fi
if [ "$prepare" = 1 ]; then
    log "files ready in $cache (--prepare: nothing measured)"
    printf '%s\n' "${files[@]}" "${big_files[@]}"
    exit 0
fi
per=2
[ "$depth" -gt 0 ] || per=1
total_n=$((${#files[@]} * rounds * (per * ${#klist[@]} + per * ${#reflist[@]}) + ${#big_files[@]} * rounds * (2 * ${#klist[@]} + ${#reflist[@]})))
tmeas=$(date +%s)
log "files ready; measuring (${#files[@]} files x $rounds rounds x ${#klist[@]} kernel path(s), -r $reps)"

{
    echo "p=$p n=$n depth=$depth reps=$reps dreps=$dreps rounds=$rounds threads=$threads kernels=${kernels:-default} n7=$n7"
    echo "memvanta=$("$mv" version 2>&1 | head -1)"
    echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
} >"$runs/settings.txt"
: >"$runs/index.tsv" # kind \t type \t round \t engine \t kernels \t run name

i=0
for f in "${files[@]}"; do
    ty=${typelist[$i]}
    i=$((i + 1))
    cat "$f" >/dev/null # both engines start from the page cache
    for r in $(seq 1 "$rounds"); do
        log "== $ty round $r/$rounds ($i/${#files[@]})"
        mvside() {
            for kp in "${klist[@]}"; do
                mvrun "$ty-r$r-mv-$kp-d0" "$kp" -m "$f" -p "$p" -n "$n" -r "$reps"
                printf 'd0\t%s\t%s\tmemvanta\t%s\t%s\n' "$ty" "$r" "$kp" "$ty-r$r-mv-$kp-d0" >>"$runs/index.tsv"
                [ "$depth" -gt 0 ] || continue
                mvrun "$ty-r$r-mv-$kp-d$depth" "$kp" -m "$f" -p "$p" -n "$n" -d "$depth" -r "$dreps"
                printf 'depth\t%s\t%s\tmemvanta\t%s\t%s\n' "$ty" "$r" "$kp" "$ty-r$r-mv-$kp-d$depth" >>"$runs/index.tsv"
            done
        }
        refside() {
            for rk in "${reflist[@]}"; do
                refrun "$ty-r$r-ref-$rk-d0" "$rk" bench "$f" -p "$p" -n "$n" --reps "$reps" --threads "$threads"
                printf 'd0\t%s\t%s\tllama.cpp\t%s\t%s\n' "$ty" "$r" "$rk" "$ty-r$r-ref-$rk-d0" >>"$runs/index.tsv"
                [ "$depth" -gt 0 ] || continue
                run "$ty-r$r-ref-$rk-d$depth" default node "$root/scripts/ref-bench.mjs" "$(refdir "$rk")" "$f" -p "$p" -n "$n" -d "$depth" -r "$dreps" -t "$threads"
                printf 'depth\t%s\t%s\tllama.cpp\t%s\t%s\n' "$ty" "$r" "$rk" "$ty-r$r-ref-$rk-d$depth" >>"$runs/index.tsv"
            done
        }
        if [ $((r % 2)) = 1 ]; then mvside; refside; else refside; mvside; fi
    done
done
if [ "$big" = 1 ]; then
    j=0
    for f in "${big_files[@]}"; do
        ty=7B-$([ $j = 0 ] && echo Q4_K_M || echo Q4_0)
        j=$((j + 1))
        cat "$f" >/dev/null
        for r in $(seq 1 "$rounds"); do
            log "== $ty round $r/$rounds"
            for kp in "${klist[@]}"; do
                mvrun "$ty-r$r-mv-$kp-res" "$kp" -m "$f" -p 0 -n "$n7" -r "$reps" -c 512
                printf 'big\t%s\t%s\tmemvanta\t%s\t%s\n' "$ty" "$r" "$kp" "$ty-r$r-mv-$kp-res" >>"$runs/index.tsv"
                mvrun "$ty-r$r-mv-$kp-budget" "$kp" -m "$f" -p 0 -n "$n7" -r "$reps" -c 512 --mem-budget 512MiB
                printf 'big\t%s\t%s\tmemvanta-budget\t%s\t%s\n' "$ty" "$r" "$kp" "$ty-r$r-mv-$kp-budget" >>"$runs/index.tsv"
            done
            for rk in "${reflist[@]}"; do
                refrun "$ty-r$r-ref-$rk" "$rk" bench "$f" -p 0 -n "$n7" --reps "$reps" --threads "$threads" --ctx 512
                printf 'big\t%s\t%s\tllama.cpp\t%s\t%s\n' "$ty" "$r" "$rk" "$ty-r$r-ref-$rk" >>"$runs/index.tsv"
            done
        done
    done
fi
log "done; tabulating"
python3 "$root/scripts/targets-table.py" "$runs" | tee "$runs/table.md" ${out:+"$out"}
log "raw results in $runs"
