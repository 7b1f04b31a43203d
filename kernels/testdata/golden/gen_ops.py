#!/usr/bin/env python3
"""Regenerate kernels/testdata/golden/ops.json: llama.cpp's ggml f32 ops
(rms_norm + mul, soft_max, swiglu, rope_ext normal/NeoX with partial rotation
and frequency factors) on seeded inputs, computed by building and running a
ggml graph through ctypes on the prebuilt libggml shipped by node-llama-cpp
(the reference harness). Usage as gen.py: python3 gen_ops.py [LIBDIR] [CPU_VARIANT]
"""
import base64
import ctypes as C
import json
import math
import os
import random
import struct
import sys

LIBDIR = sys.argv[1] if len(sys.argv) > 1 else "/work/ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
VARIANT = sys.argv[2] if len(sys.argv) > 2 else "haswell"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.json")

base = C.CDLL(os.path.join(LIBDIR, "libggml-base.so"), mode=C.RTLD_GLOBAL)
cpu = C.CDLL(os.path.join(LIBDIR, "libggml-cpu-%s.so" % VARIANT), mode=C.RTLD_GLOBAL)
cpu.ggml_cpu_init()

GGML_F32, GGML_I32 = 0, 26
P = C.c_void_p


class InitParams(C.Structure):
    _fields_ = [("mem_size", C.c_size_t), ("mem_buffer", C.c_void_p), ("no_alloc", C.c_bool)]


def sig(fn, res, *args):
    f = getattr(base, fn) if hasattr(base, fn) else getattr(cpu, fn)
    f.restype = res
    f.argtypes = list(args)
    return f


ggml_init = sig("ggml_init", P, InitParams)
ggml_free = sig("ggml_free", None, P)
new1 = sig("ggml_new_tensor_1d", P, P, C.c_int, C.c_int64)
new2 = sig("ggml_new_tensor_2d", P, P, C.c_int, C.c_int64, C.c_int64)
new3 = sig("ggml_new_tensor_3d", P, P, C.c_int, C.c_int64, C.c_int64, C.c_int64)
get_data = sig("ggml_get_data", P, P)
rms_norm = sig("ggml_rms_norm", P, P, P, C.c_float)
mul = sig("ggml_mul", P, P, P, P)
soft_max = sig("ggml_soft_max", P, P, P)
swiglu = sig("ggml_swiglu_split", P, P, P, P)
rope_ext = sig("ggml_rope_ext", P, P, P, P, P, C.c_int, C.c_int, C.c_int,
               C.c_float, C.c_float, C.c_float, C.c_float, C.c_float, C.c_float)
new_graph = sig("ggml_new_graph", P, P)
expand = sig("ggml_build_forward_expand", None, P, P)
compute = sig("ggml_graph_compute_with_ctx", C.c_int, P, P, C.c_int)

rng = random.Random(4242)


def rand_vec(n, scale=1.0):
    return [struct.unpack("<f", struct.pack("<f", rng.gauss(0, scale)))[0] for _ in range(n)]


def b64f(xs):
    return base64.b64encode(struct.pack("<%df" % len(xs), *xs)).decode()


def fill(t, xs, fmt="f"):
    buf = struct.pack("<%d%s" % (len(xs), fmt), *xs)
    C.memmove(get_data(t), buf, len(buf))


def read(t, n):
    return list(struct.unpack("<%df" % n, C.string_at(get_data(t), 4 * n)))


def run(build):
    ctx = ggml_init(InitParams(256 << 20, None, False))
    out, n = build(ctx)
    g = new_graph(ctx)
    expand(g, out)
    if compute(ctx, g, 1) != 0:
        raise SystemExit("ggml_graph_compute failed")
    res = read(out, n)
    ggml_free(ctx)
    return res


golden = {"generator": "kernels/testdata/golden/gen_ops.py",
          "oracle": "node-llama-cpp 3.21.1 prebuilt ggml, cpu variant " + VARIANT,
          "rmsnorm": [], "softmax": [], "swiglu": [], "rope": []}

for n in (7, 896, 4096):
    x, w = rand_vec(n, 3.0), rand_vec(n)
    eps = 1e-5 if n != 7 else 1e-6

    def b(ctx, x=x, w=w, eps=eps, n=n):
        tx, tw = new1(ctx, GGML_F32, n), new1(ctx, GGML_F32, n)
        fill(tx, x)
        fill(tw, w)
        return mul(ctx, rms_norm(ctx, tx, eps), tw), n
    golden["rmsnorm"].append({"n": n, "eps": eps, "x": b64f(x), "w": b64f(w), "out": b64f(run(b))})

for n in (5, 300, 4096):
    x = rand_vec(n, 4.0)
    if n > 5:
        x[3] = float("-inf")

    def b(ctx, x=x, n=n):
        tx = new1(ctx, GGML_F32, n)
        fill(tx, x)
        return soft_max(ctx, tx), n
    golden["softmax"].append({"n": n, "x": b64f(x), "out": b64f(run(b))})

for n in (9, 1024):
    g, u = rand_vec(n, 3.0), rand_vec(n)

    def b(ctx, g=g, u=u, n=n):
        tg, tu = new1(ctx, GGML_F32, n), new1(ctx, GGML_F32, n)
        fill(tg, g)
        fill(tu, u)
        return swiglu(ctx, tg, tu), n
    golden["swiglu"].append({"n": n, "gate": b64f(g), "up": b64f(u), "out": b64f(run(b))})

# rope_ext(a [head_dim, heads, tokens], positions, freq_factors, n_dims, mode, n_ctx_orig,
#          freq_base, freq_scale, ext_factor=0, attn_factor=1, beta_fast=32, beta_slow=1)
ROPE_CASES = [
    dict(head=64, heads=2, dims=64, neox=False, base=10000.0, scale=1.0, ff=False),
    dict(head=64, heads=3, dims=64, neox=True, base=1000000.0, scale=1.0, ff=False),
    dict(head=128, heads=2, dims=64, neox=True, base=10000.0, scale=0.25, ff=False),
    dict(head=128, heads=2, dims=128, neox=False, base=500000.0, scale=1.0, ff=True),
]
positions = [0, 1, 17, 4000]
for c in ROPE_CASES:
    T = len(positions)
    x = rand_vec(c["head"] * c["heads"] * T)
    ff = [1.0 + (i % 8) * 0.75 for i in range(c["dims"] // 2)] if c["ff"] else None

    def b(ctx, c=c, x=x, ff=ff, T=T):
        ta = new3(ctx, GGML_F32, c["head"], c["heads"], T)
        fill(ta, x)
        tp = new1(ctx, GGML_I32, T)
        fill(tp, positions, "i")
        tf = None
        if ff is not None:
            tf = new1(ctx, GGML_F32, len(ff))
            fill(tf, ff)
        return rope_ext(ctx, ta, tp, tf, c["dims"], 2 if c["neox"] else 0, 0,
                        c["base"], c["scale"], 0.0, 1.0, 32.0, 1.0), len(x)
    rec = dict(c)
    rec.update({"positions": positions, "x": b64f(x), "out": b64f(run(b))})
    rec["ff"] = b64f(ff) if ff else ""
    golden["rope"].append(rec)

with open(OUT, "w") as f:
    json.dump(golden, f, indent=0)
    f.write("\n")
print("wrote", OUT, os.path.getsize(OUT), "bytes")
