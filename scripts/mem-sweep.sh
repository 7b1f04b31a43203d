#!/usr/bin/env bash
# mem-sweep.sh: run one command under a descending list of memory ceilings
# and report, per ceiling, whether it completed or was OOM-killed, its wall
# time, tok/s, and the memory the ceiling actually charged.
#
# Usage:
#   scripts/mem-sweep.sh [options] -- COMMAND [ARGS...]
# Options:
#   -c "4G 2G 1G 512M"  ceilings, largest first (suffixes K M G; default below)
#   -t SECONDS          per-run timeout (default 900); a timeout is reported, not counted as completed
#   -r ERE              extended regex locating the throughput in the command's output; the last
#                       number of the last match is taken as tok/s (default: "tg" figures of
#                       memvanta bench and ref.mjs bench, else "N tok/s" / "N t/s")
#   --cold FILE         drop FILE from the page cache before each run (posix_fadvise DONTNEED via
#                       dd iflag=nocache), so the run's file pages are charged to its own ceiling
#   --label TEXT        first column of the report (default: the command's basename)
#   --keep-going        continue below the first failing ceiling (default: stop after two
#                       consecutive failures)
#   --log DIR           keep each run's output as DIR/LABEL-CEILING.log (default: discarded)
#   --rlimit-as         no cgroup available: fall back to prlimit --as (virtual address space).
#                       RLIMIT_AS is NOT an RSS limit: a 4 GB mmap needs 4 GB of address space even
#                       when little of it is resident, so resident/mmap runs fail for the wrong
#                       reason. Only enabled on request and labelled in the report.
#
# Mechanism, in order of preference: cgroup v2 (memory.max, memory.swap.max=0,
# memory.peak, memory.events oom_kill) where the memory controller is enabled;
# else cgroup v1 (memory.limit_in_bytes, memory.memsw.limit_in_bytes,
# memory.max_usage_in_bytes, memory.oom_control oom_kill). A fresh child group
# is created under this shell's own group for every run and removed after, so
# outer limits still apply. Needs write access to the cgroup tree (root here).
#
# What a ceiling counts: anonymous memory plus page cache charged to the group.
# Page cache already charged elsewhere (a warm file read by another process
# before) is NOT re-charged when mapped, so without --cold an mmap-based run
# is only limited in its anonymous memory. Clean file pages are reclaimable:
# under a ceiling below the file size an mmap reader is not killed, it re-reads
# from disk (slow) — hence the timeout and the tok/s column.
#
# Output: one line per ceiling, tab-separated:
#   label ceiling status wall_s tok_s charged_peak_MiB
# status: ok | oom-killed | timeout | exit=N
set -u

ceilings="8G 6G 5G 4G 3G 2G 1536M 1G 768M 512M 384M 256M"
timeout_s=900
tps_re=""
cold=""
label=""
keep_going=0
rlimit_as=0
logdir=""

usage() { sed -n '2,25p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        -c) ceilings="$2"; shift 2 ;;
        -t) timeout_s="$2"; shift 2 ;;
        -r) tps_re="$2"; shift 2 ;;
        --cold) cold="$2"; shift 2 ;;
        --label) label="$2"; shift 2 ;;
        --keep-going) keep_going=1; shift ;;
        --rlimit-as) rlimit_as=1; shift ;;
        --log) logdir="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) echo "mem-sweep: unknown option $1" >&2; usage ;;
    esac
done
[ $# -gt 0 ] || usage
[ -n "$label" ] || label=$(basename "$1")
if [ -n "$cold" ] && [ ! -r "$cold" ]; then
    echo "mem-sweep: --cold $cold: not readable" >&2; exit 2
fi

to_bytes() {
    local v=$1 n u
    n=${v%[KkMmGg]}; u=${v#"$n"}
    case "$u" in
        K|k) echo $((n * 1024)) ;;
        M|m) echo $((n * 1024 * 1024)) ;;
        G|g) echo $((n * 1024 * 1024 * 1024)) ;;
        "") echo "$n" ;;
    esac
}

# Find a writable memory cgroup parent: v2 first, then v1.
mode=""
parent=""
v2_rel=$(awk -F: '$1=="0"{print $3}' /proc/self/cgroup)
for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    if [ -f "$root/cgroup.controllers" ] && [ -n "$v2_rel" ]; then
        p="$root$v2_rel"
        if grep -qw memory "$p/cgroup.subtree_control" 2>/dev/null || \
           { grep -qw memory "$p/cgroup.controllers" 2>/dev/null && echo +memory > "$p/cgroup.subtree_control" 2>/dev/null; }; then
            if [ -w "$p" ]; then mode=v2; parent=$p; break; fi
        fi
    fi
done
if [ -z "$mode" ] && [ -d /sys/fs/cgroup/memory ]; then
    v1_rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/{print $3}' /proc/self/cgroup)
    p="/sys/fs/cgroup/memory$v1_rel"
    if [ -w "$p" ] && [ -f "$p/memory.limit_in_bytes" ]; then mode=v1; parent=$p; fi
fi
if [ -z "$mode" ]; then
    if [ $rlimit_as = 1 ] && command -v prlimit >/dev/null; then
        mode=rlimit-as
    else
        echo "mem-sweep: no writable memory cgroup (v2 memory controller or v1 memory hierarchy)." >&2
        echo "mem-sweep: run as root, or pass --rlimit-as to limit virtual address space instead (not RSS)." >&2
        exit 1
    fi
fi
if [ -n "$(swapon --show=NAME --noheadings 2>/dev/null)" ]; then
    echo "mem-sweep: warning: swap is on; the group's swap is limited to 0 where the kernel allows" >&2
fi
echo "# mem-sweep: mechanism=$mode parent=${parent:-none} timeout=${timeout_s}s cold=${cold:-no} cmd=$*" >&2

extract_tps() {
    local log=$1 m
    if [ -n "$tps_re" ]; then
        m=$(grep -oE "$tps_re" "$log" | tail -n 1)
    else
        # memvanta bench (text or --json) and ref.mjs bench print tg figures;
        # generate prints "N tok/s" style stats.
        m=$(grep -oE '"tg[0-9]*"[^}]*"(tps_mean|mean)": *[0-9.]+' "$log" | tail -n 1)
        [ -n "$m" ] || m=$(grep -oE 'tg[0-9]+[^0-9]+[0-9]+(\.[0-9]+)? *t(ok)?/s' "$log" | tail -n 1)
        [ -n "$m" ] || m=$(grep -oE '[0-9]+(\.[0-9]+)? *(tok/s|t/s)' "$log" | tail -n 1)
    fi
    echo "$m" | grep -oE '[0-9]+(\.[0-9]+)?' | tail -n 1
}

fails=0
printf 'label\tceiling\tstatus\twall_s\ttok_s\tcharged_peak_MiB\n'
for c in $ceilings; do
    bytes=$(to_bytes "$c")
    if [ -z "$bytes" ]; then echo "mem-sweep: bad ceiling $c" >&2; exit 2; fi
    if [ -n "$cold" ]; then
        dd if="$cold" iflag=nocache count=0 status=none 2>/dev/null || true
    fi
    log=$(mktemp)
    grp=""
    case $mode in
        v2)
            grp="$parent/memsweep.$$.$c"
            mkdir "$grp" || exit 1
            echo "$bytes" > "$grp/memory.max"
            echo 0 > "$grp/memory.swap.max" 2>/dev/null || true
            ;;
        v1)
            grp="$parent/memsweep.$$.$c"
            mkdir "$grp" || exit 1
            echo "$bytes" > "$grp/memory.limit_in_bytes"
            echo "$bytes" > "$grp/memory.memsw.limit_in_bytes" 2>/dev/null || true
            echo 0 > "$grp/memory.swappiness" 2>/dev/null || true
            ;;
    esac
    t0=$(date +%s.%N)
    case $mode in
        v1|v2)
            # The child joins the group before exec'ing the command, so
            # everything it and its children allocate is charged there.
            timeout -k 10 "$timeout_s" sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$grp" "$@" >"$log" 2>&1 &
            wait $! 2>/dev/null
            rc=$? ;;
        rlimit-as)
            timeout -k 10 "$timeout_s" prlimit --as="$bytes" -- "$@" >"$log" 2>&1 &
            wait $! 2>/dev/null
            rc=$? ;;
    esac
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    oom=0; peak=""
    case $mode in
        v2)
            oom=$(awk '$1=="oom_kill"{print $2}' "$grp/memory.events" 2>/dev/null)
            peak=$(cat "$grp/memory.peak" 2>/dev/null) ;;
        v1)
            oom=$(awk '$1=="oom_kill"{print $2}' "$grp/memory.oom_control" 2>/dev/null)
            peak=$(cat "$grp/memory.max_usage_in_bytes" 2>/dev/null) ;;
    esac
    if [ -n "$grp" ]; then
        # The group is empty once the command has exited; retry for a few
        # seconds while the kernel finishes reaping and uncharging.
        for _ in $(seq 50); do rmdir "$grp" 2>/dev/null && break; sleep 0.2; done
        [ -d "$grp" ] && echo "mem-sweep: warning: could not remove $grp (still has tasks?)" >&2
    fi
    if [ "${oom:-0}" -gt 0 ] 2>/dev/null; then
        status=oom-killed
    elif [ $rc -eq 124 ]; then
        status=timeout
    elif [ $rc -eq 0 ]; then
        status=ok
    elif [ $rc -eq 137 ] && [ $mode = rlimit-as ]; then
        status=killed
    else
        status="exit=$rc"
    fi
    tps=""
    [ $status = ok ] && tps=$(extract_tps "$log")
    peak_mib=""
    [ -n "$peak" ] && peak_mib=$((peak / 1024 / 1024))
    [ $mode = rlimit-as ] && status="$status(rlimit-as)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$c" "$status" "$wall" "${tps:--}" "${peak_mib:--}"
    if [ $status != ok ]; then
        echo "# $c: last lines of output:" >&2
        tail -n 3 "$log" | sed 's/^/#   /' >&2
        fails=$((fails + 1))
        if [ $keep_going = 0 ] && [ $fails -ge 2 ]; then rm -f "$log"; break; fi
    else
        fails=0
    fi
    if [ -n "$logdir" ]; then
        mkdir -p "$logdir" && cp "$log" "$logdir/$label-$c.log"
    fi
    rm -f "$log"
done
