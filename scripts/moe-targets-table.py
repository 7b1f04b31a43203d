#!/usr/bin/env python3
"""Tabulates a scripts/moe-targets.sh run directory: resident speed against
llama.cpp (best round), and speed under memory ceilings with the read bound.

    python3 scripts/moe-targets-table.py RUN_DIR
"""
import json
import os
import re
import sys

d = sys.argv[1]
settings = {}
for line in open(os.path.join(d, "settings.txt")):
    for kv in line.split() if line.startswith("p=") else [line.rstrip("\n")]:
        if "=" in kv:
            k, v = kv.split("=", 1)
            settings[k] = v


def load_json(path):
    """The JSON object in path: the whole file, or (a mem-sweep log with
    stderr mixed in) the lines from a lone "{" to a lone "}"."""
    text = open(path).read()
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = text.splitlines()
    try:
        a = lines.index("{")
        b = len(lines) - 1 - lines[::-1].index("}")
        return json.loads("\n".join(lines[a:b + 1]))
    except ValueError:
        m = re.search(r"^\{.*\}$", text, re.M)
        return json.loads(m.group(0)) if m else None


def figures(j, engine):
    out = {}
    if j is None:
        return out
    if engine == "memvanta":
        for r in j.get("results", []):
            out[r["test"]] = r["tps_mean"]
    else:
        for test, v in j.get("results", {}).items():
            if v and v.get("llama_perf"):
                out[test] = v["llama_perf"]["tps_mean"]
    return out


def rss_mib(name):
    try:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(os.path.join(d, name + ".time")).read())
        return int(m.group(1)) / 1024
    except OSError:
        return None


res, ceil = {}, []
for line in open(os.path.join(d, "index.tsv")):
    kind, state, c, eng, kp, rnd, name = line.rstrip("\n").split("\t")
    if kind == "res":
        j = load_json(os.path.join(d, name + ".json"))
        b = res.setdefault((eng, kp), {"rss": 0})
        for t, v in figures(j, eng).items():
            b[t] = max(b.get(t, 0), v)
        b["rss"] = max(b["rss"], rss_mib(name) or 0)
    else:
        ceil.append((state, c, eng, kp, name))

print(f"File: `{os.path.basename(settings['file'])}` ({int(settings['size']) / 2**30:.2f} GiB); "
      f"{settings.get('cpu', '').strip()}; commit {settings.get('commit')}; load at start {settings.get('load')}\n")
if res:
    tests = sorted({t for b in res.values() for t in b if t != "rss"}, key=lambda t: (t[:2] != "pp", t))
    refs = {kp: b for (e, kp), b in res.items() if e == "llama.cpp"}
    print("Resident, best of " + settings.get("rounds", "?") + " rounds:\n")
    print("| engine | kernels | " + " | ".join(tests) + " | peak RSS |")
    print("|---" * (len(tests) + 3) + "|")
    for (e, kp), b in sorted(res.items()):
        row = []
        for t in tests:
            v = b.get(t)
            s = f"{v:.2f}" if v else "-"
            if e == "memvanta" and v:
                ref = refs.get("avx2" if kp == "avx2" and "avx2" in refs else "default", {}).get(t)
                if ref:
                    s += f" ({v / ref:.2f}×)"
            row.append(s)
        print(f"| {e} | {kp} | " + " | ".join(row) + f" | {b['rss']:.0f} MiB |")
    print("\n(memvanta's ratio is against llama.cpp's same-ISA build: avx2 against its AVX2-only copy.)\n")

if ceil:
    sweep = {}
    for line in open(os.path.join(d, "ceilings.tsv")):
        f = line.rstrip("\n").split("\t")
        if f[0] != "label":
            sweep[(f[0], f[1])] = f
    rate = {"cold": float(settings.get("cold_rate", 0)), "warm": float(settings.get("warm_rate", 0))}
    print("Under memory ceilings (cgroup, swap off; tg tok/s; charged = the group's peak):\n")
    print("| state | ceiling | memvanta budget | memvanta tg | llama.cpp tg (mmap) | ratio | expert MiB/token | read bound | of bound | charged MiB (mv / llama.cpp) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    seen = set()
    for state, c, eng, kp, name in ceil:
        if (state, c) in seen:
            continue
        seen.add((state, c))
        mv = sweep.get((f"ceil-{state}-mv", c))
        rf = sweep.get((f"ceil-{state}-ref", c))
        budget = next((k for s2, c2, e2, k, _ in ceil if s2 == state and c2 == c and e2 == "memvanta"), "-")
        mvt = float(mv[4]) if mv and mv[4] not in ("-", "") else None
        rft = float(rf[4]) if rf and rf[4] not in ("-", "") else None
        per = None
        log = os.path.join(d, f"ceil-{state}-mv-{c}.log")
        if os.path.exists(log):
            j = load_json(log)
            tel = (j or {}).get("telemetry", {})
            if tel.get("passes"):
                per = tel.get("expert_bytes_read", 0) / tel["passes"]
        bound = rate[state] / per if per else None
        cells = [state, c, budget,
                 f"{mvt:.2f}" if mvt else (mv[2] if mv else "-"),
                 f"{rft:.2f}" if rft else (rf[2] if rf else "-"),
                 f"{mvt / rft:.2f}×" if mvt and rft else "-",
                 f"{per / 2**20:.0f}" if per else "-",
                 f"{bound:.2f} tok/s" if bound else "-",
                 f"{100 * mvt / bound:.0f}%" if mvt and bound else "-",
                 f"{mv[5] if mv else '-'} / {rf[5] if rf else '-'}"]
        print("| " + " | ".join(cells) + " |")
    print(f"\nRead rates: cold {rate['cold'] / 1e9:.2f} GB/s (dd iflag=direct), warm {rate['warm'] / 1e9:.2f} GB/s (page cache).")
    print("Warm: the file's pages are charged to the group that first read them, so the ceiling limits only")
    print("anonymous memory there; the cold rows are the ceiling test.")
