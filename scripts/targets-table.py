#!/usr/bin/env python3
"""Tabulates a scripts/targets.sh run directory: the best round of each
engine per file and test, memvanta/llama.cpp ratios against issue 13's
targets, with the per-round figures after the table.

    python3 scripts/targets-table.py RUN_DIR
"""
import json
import os
import re
import sys

d = sys.argv[1]
settings = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(d, "settings.txt")) if "=" in l)
first = open(os.path.join(d, "settings.txt")).readline().split()
cfg = dict(kv.split("=", 1) for kv in first)
P, N, D, N7 = cfg["p"], cfg["n"], cfg["depth"], cfg["n7"]


def rss_mib(name):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(os.path.join(d, name + ".time")).read())
    return int(m.group(1)) / 1024


def variant(name):
    """The libggml-cpu variant a llama.cpp process loaded (ref.mjs's log), or None."""
    try:
        j = json.load(open(os.path.join(d, name + ".json")))
    except (OSError, ValueError):
        return None
    for l in j.get("log_notable", []):
        m = re.search(r"libggml-cpu-([\w-]+)\.so", l)
        if m:
            return m.group(1)
    return None


def figures(name, engine):
    """test label ("pp512", "tg128 @ d2048") -> (mean, sd) tok/s."""
    j = json.load(open(os.path.join(d, name + ".json")))
    out = {}
    if engine.startswith("memvanta"):
        for r in j["results"]:
            lab = r["test"] + (f" @ d{r['depth']}" if r["depth"] else "")
            out[lab] = (r["tps_mean"], r["tps_stdev"])
    else:
        depth = j.get("depth", 0)
        for test, v in j["results"].items():
            if v and v.get("llama_perf"):
                lab = test + (f" @ d{depth}" if depth else "")
                out[lab] = (v["llama_perf"]["tps_mean"], v["llama_perf"]["tps_stdev"])
    return out


# best[(kind, type, engine, kernels)] = {label: (mean, sd), "rss": MiB of the d0/big process}
# llama.cpp's kernels column: "default" (its own pick) or "avx2" (restricted
# to its AVX2 variants, the comparator of memvanta's avx2 path on an AVX-512
# machine); runs before that split wrote "-" for the default.
best, rounds, order, variants = {}, [], [], {}
for line in open(os.path.join(d, "index.tsv")):
    kind, ty, rnd, eng, kp, name = line.rstrip("\n").split("\t")
    if not os.path.exists(os.path.join(d, name + ".json")):
        continue
    if eng == "llama.cpp":
        kp = "default" if kp == "-" else kp
        v = variant(name)
        if v:
            variants.setdefault(kp, set()).add(v)
    f = figures(name, eng)
    rss = rss_mib(name)
    rounds.append((kind, ty, rnd, eng, kp, f, rss))
    if ty not in order:
        order.append(ty)
    b = best.setdefault((kind, ty, eng, kp), {})
    for k, v in f.items():
        if k not in b or v[0] > b[k][0]:
            b[k] = v
    b["rss"] = max(b.get("rss", 0), rss)

kps = sorted({kp for (_, _, e, kp) in best if e.startswith("memvanta")})
fmt = lambda v: f"{v[0]:.2f} ± {v[1]:.2f}" if v else "—"
pp, tg = f"pp{P}", f"tg{N}"
ppd, tgd = f"pp{P} @ d{D}", f"tg{N} @ d{D}"

print(f"## Targets vs llama.cpp ({settings.get('commit', '?')}, {settings.get('cpu', '?').strip()})\n")
print(f"{cfg['threads']} threads; each figure is the best of {cfg['rounds']} alternating rounds of the mean of "
      f"{cfg['reps']} repetitions ({cfg.get('dreps', cfg['reps'])} at depth {D}) (tok/s ± sd); llama.cpp timed by llama_perf; peak RSS = largest round's "
      f"ru_maxrss of the depth-0 process (memvanta resident, F16 KV; llama.cpp node-llama-cpp incl. node).\n")
summary, cross = [], []
refkind = lambda kp: kp if any(e == "llama.cpp" and k == kp for (_, _, e, k) in best) else "default"
vname = lambda rk: "/".join(sorted(variants.get(rk, []))) or "?"
for kp in kps:
    rk = refkind(kp)
    print(f"### Kernel path: {kp}\n")
    rdesc = {"avx2": "its AVX2 variants only", "avxvnni": "its variants up to alderlake (AVX2 + AVX-VNNI) only"}.get(rk, "its default pick")
    print(f"llama.cpp: {rdesc} (loaded libggml-cpu-{vname(rk)}).\n")
    print(f"| file | test | memvanta ({kp}) | llama.cpp ({vname(rk)}) | ratio | target | met |")
    print("|---|---|---|---|---|---|---|")
    for ty in order:
        mv0, rf0 = best.get(("d0", ty, "memvanta", kp)), best.get(("d0", ty, "llama.cpp", rk))
        mvd, rfd = best.get(("depth", ty, "memvanta", kp)), best.get(("depth", ty, "llama.cpp", rk))
        rfx = best.get(("d0", ty, "llama.cpp", "default"))
        if rk != "default" and mv0 and rfx:
            cross.append((kp, ty, *[mv0[t][0] / rfx[t][0] if t in mv0 and t in rfx and rfx[t][0] > 0 else None for t in (f"pp{P}", f"tg{N}")]))
        if not (mv0 and rf0):
            continue
        ratio = lambda a, b, k: a[k][0] / b[k][0] if a and b and k in a and k in b and b[k][0] > 0 else None
        rpp, rtg = ratio(mv0, rf0, pp), ratio(mv0, rf0, tg)
        rppd, rtgd = ratio(mvd, rfd, ppd), ratio(mvd, rfd, tgd)
        rrss = mv0["rss"] / rf0["rss"]
        rows = [
            (pp, fmt(mv0.get(pp)), fmt(rf0.get(pp)), rpp, "≥ 1.50×", rpp is not None and rpp >= 1.5),
            (tg, fmt(mv0.get(tg)), fmt(rf0.get(tg)), rtg, "≥ 1.10×", rtg is not None and rtg >= 1.1),
            ("peak RSS", f"{mv0['rss']:.0f} MiB", f"{rf0['rss']:.0f} MiB", rrss, "≤ 1.00×", rrss <= 1.0),
            (tgd, fmt(mvd.get(tgd) if mvd else None), fmt(rfd.get(tgd) if rfd else None), rtgd,
             f"≥ {tg} ratio ({rtg:.2f}×)" if rtg else "≥ depth-0 ratio",
             rtgd is not None and rtg is not None and rtgd >= rtg),
            (ppd, fmt(mvd.get(ppd) if mvd else None), fmt(rfd.get(ppd) if rfd else None), rppd, "(reported)", None),
        ]
        if not mvd:
            rows = rows[:3]  # -d 0: no depth tests
        for test, a, b, r, target, met in rows:
            rs = f"**{r:.2f}×**" if r is not None else "—"
            ms = "—" if met is None else ("met" if met else "**not met**")
            print(f"| {ty} | {test} | {a} | {b} | {rs} | {target} | {ms} |")
            if met is not None:
                summary.append((kp, ty, test, met))
    print()
for kp in kps:
    got = [s for s in summary if s[0] == kp]
    miss = [f"{ty} {test}" for _, ty, test, met in got if not met]
    print(f"{kp}: {sum(1 for s in got if s[3])}/{len(got)} targets met" + (f"; not met: {', '.join(miss)}" if miss else ""))
print()
if cross:
    print(f"Against llama.cpp's default pick (libggml-cpu-{vname('default')}) instead, not a target: " + "; ".join(
        f"{kp} {ty} pp{P} " + (f"{a:.2f}×" if a else "—") + f", tg{N} " + (f"{b:.2f}×" if b else "—") for kp, ty, a, b in cross) + "\n")

# Path against path (memvanta's avxvnni over its avx2, same run).
for kp in kps:
    if kp == "avx2":
        continue
    rs = []
    for ty in order:
        a, b = best.get(("d0", ty, "memvanta", kp)), best.get(("d0", ty, "memvanta", "avx2"))
        if a and b:
            rs.append(f"{ty} " + ", ".join(f"{t} {a[t][0] / b[t][0]:.2f}×" for t in (pp, tg) if t in a and t in b and b[t][0] > 0))
    if rs:
        print(f"memvanta {kp} over avx2 (same run): " + "; ".join(rs) + "\n")

big = [ty for ty in order if any(k == "big" and t == ty for (k, t, _, _) in best)]
if big:
    print(f"### 7B-shaped files, tg{N7} at -c 512\n")
    print("| file | kernels | memvanta resident | memvanta --mem-budget 512MiB | llama.cpp | resident ratio (≥ 1.10×) | budget/resident (≥ 0.95×) | peak RSS resident / budget / llama.cpp |")
    print("|---|---|---|---|---|---|---|---|")
    t = f"tg{N7}"
    for ty in big:
        for kp in kps:
            rf = best.get(("big", ty, "llama.cpp", refkind(kp)))
            res, bud = best.get(("big", ty, "memvanta", kp)), best.get(("big", ty, "memvanta-budget", kp))
            if not (res and bud and rf and t in res and t in bud and t in rf):
                continue
            r1, r2 = res[t][0] / rf[t][0], bud[t][0] / res[t][0]
            print(f"| {ty} | {kp} | {fmt(res[t])} | {fmt(bud[t])} | {fmt(rf[t])} | **{r1:.2f}×** {'met' if r1 >= 1.1 else '**not met**'} "
                  f"| **{r2:.2f}×** {'met' if r2 >= 0.95 else '**not met**'} | {res['rss']:.0f} / {bud['rss']:.0f} / {rf['rss']:.0f} MiB |")
    print()

print("<details><summary>Per round</summary>\n")
for kind, ty, rnd, eng, kp, f, rss in rounds:
    label = eng + (f" ({kp})" if kp not in ("-", "default") else "")
    print(f"- {ty} r{rnd} {kind} {label}: " + ", ".join(f"{k} {v[0]:.2f}±{v[1]:.2f}" for k, v in f.items()) + f", {rss:.0f} MiB")
print("\n</details>")
