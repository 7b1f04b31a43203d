#!/usr/bin/env python3
"""Regenerate kernels/testdata/golden/ggml-iq3.json from llama.cpp's own ggml.

The IQ3_XXS, IQ3_S, IQ1_S and IQ1_M vectors (see gen.py for the oracle: the
prebuilt ggml shipped with node-llama-cpp, called through ctypes):

  - dequant: random blocks (random quant bytes, a sane fp16 d), and blocks
    built so that together they reach every grid index (iq3xxs_grid 256,
    iq3s_grid 512, iq1s_grid 2048) and every ksigns_iq2xs index (128) with a
    distinct weight position each: a mistyped table entry in iq3grid.go or
    iq1grid.go changes one of their outputs;
  - dot: random weight rows against Q8_K activations (quantize_row_q8_K_ref,
    so the group sums IQ1_S uses are ggml's), ggml's SIMD and generic dots.

Kept out of ggml.json so that file stays byte-identical.

usage: python3 gen_iq3.py [LIBDIR] [CPU_VARIANT]
"""
import base64
import ctypes
import json
import os
import random
import struct
import sys

LIBDIR = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.environ.get("MEMVANTA_LIBLLAMA", "/work/ref/x"))
VARIANT = sys.argv[2] if len(sys.argv) > 2 else "haswell"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ggml-iq3.json")

base = ctypes.CDLL(os.path.join(LIBDIR, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
cpu = ctypes.CDLL(os.path.join(LIBDIR, "libggml-cpu-%s.so" % VARIANT), mode=ctypes.RTLD_GLOBAL)
cpu.ggml_cpu_init()

rng = random.Random(20261207)

# name: (block bytes, fp16 d offset or None)
TYPES = {"IQ3_XXS": (98, 0), "IQ3_S": (110, 0), "IQ1_S": (50, 0), "IQ1_M": (56, None)}


def b64(b):
    return base64.b64encode(bytes(b)).decode()


def rand_d():
    v = (1 + rng.random()) * 2.0 ** (-4 - rng.randrange(9))
    if rng.randrange(4) == 0:
        v = -v
    return struct.pack("<e", v)


def set_iq1m_d(blk, off):
    h = struct.unpack("<H", rand_d())[0]
    for w in range(4):
        o = off + 48 + 2 * w
        sc = struct.unpack("<H", blk[o:o + 2])[0] & 0x0fff
        sc |= ((h >> (4 * w)) & 15) << 12
        blk[o:o + 2] = struct.pack("<H", sc)


def fix_d(name, buf):
    ts, doff = TYPES[name]
    for o in range(0, len(buf), ts):
        if doff is None:
            set_iq1m_d(buf, o)
        else:
            buf[o + doff:o + doff + 2] = rand_d()
    return buf


def rand_weights(name, n):
    ts, _ = TYPES[name]
    return bytes(fix_d(name, bytearray(rng.getrandbits(8) for _ in range(n // 256 * ts))))


def coverage(name):
    """Blocks that between them use every grid (and sign-table) index."""
    ts, _ = TYPES[name]
    if name == "IQ3_XXS":
        nb = 4
        buf = bytearray(rng.getrandbits(8) for _ in range(nb * ts))
        for b in range(nb):
            o = b * ts
            for k in range(64):
                buf[o + 2 + k] = (b * 64 + k) & 255
            for g in range(8):
                aux = rng.randrange(16) << 28
                for l in range(4):
                    aux |= ((b * 32 + g * 4 + l) & 127) << (7 * l)
                buf[o + 66 + 4 * g:o + 70 + 4 * g] = struct.pack("<I", aux)
    elif name == "IQ3_S":
        nb = 8
        buf = bytearray(rng.getrandbits(8) for _ in range(nb * ts))
        for b in range(nb):
            o = b * ts
            for g in range(8):
                buf[o + 66 + g] = 0
            for k in range(64):
                idx = b * 64 + k
                buf[o + 2 + k] = idx & 255
                buf[o + 66 + k // 8] |= (idx >> 8) << (k % 8)
    elif name == "IQ1_S":
        nb = 64
        buf = bytearray(rng.getrandbits(8) for _ in range(nb * ts))
        for b in range(nb):
            o = b * ts
            for g in range(8):
                qh = rng.randrange(16) << 12
                for l in range(4):
                    idx = b * 32 + g * 4 + l
                    buf[o + 2 + 4 * g + l] = idx & 255
                    qh |= (idx >> 8) << (3 * l)
                buf[o + 34 + 2 * g:o + 36 + 2 * g] = struct.pack("<H", qh)
    else:  # IQ1_M
        nb = 64
        buf = bytearray(rng.getrandbits(8) for _ in range(nb * ts))
        for b in range(nb):
            o = b * ts
            for g in range(8):
                for hb in range(2):
                    q = 0
                    for h in range(2):
                        l = 2 * hb + h
                        idx = b * 32 + g * 4 + l
                        buf[o + 4 * g + l] = idx & 255
                        q |= ((idx >> 8) | (rng.randrange(2) << 3)) << (4 * h)
                    buf[o + 32 + 2 * g + hb] = q
    return bytes(fix_d(name, buf)), nb * 256


def dequant(name, src, n):
    out = (ctypes.c_float * n)()
    getattr(base, "dequantize_row_" + name.lower())(ctypes.c_char_p(src), out, ctypes.c_int64(n))
    return bytes(out)


def rand_activations(n):
    xs = []
    for _ in range(n):
        v = rng.gauss(0, 1)
        if rng.randrange(97) == 0:
            v *= 20
        xs.append(v)
    return xs


def q8k(xs):
    n = len(xs)
    buf = (ctypes.c_char * (n // 256 * 292))()
    base.quantize_row_q8_K_ref((ctypes.c_float * n)(*xs), buf, ctypes.c_int64(n))
    return bytes(buf)


def vec_dot(fname, n, w, a):
    s = ctypes.c_float()
    getattr(cpu, fname)(ctypes.c_int(n), ctypes.byref(s), ctypes.c_size_t(0), ctypes.c_char_p(w), ctypes.c_size_t(0),
                        ctypes.c_char_p(a), ctypes.c_size_t(0), ctypes.c_int(1))
    return struct.unpack("<I", struct.pack("<f", s.value))[0]


golden = {"generator": "kernels/testdata/golden/gen_iq3.py",
          "oracle": "node-llama-cpp 3.21.1 prebuilt ggml (llama.cpp release v0.4.0 per _nlcBuildMetadata.json), cpu variant " + VARIANT,
          "dequant": [], "quant": [], "dot": []}
for name in TYPES:
    for nblocks in (1, 3):
        n = 256 * nblocks
        src = rand_weights(name, n)
        golden["dequant"].append({"type": name, "n": n, "src": b64(src), "out": b64(dequant(name, src, n))})
    src, n = coverage(name)
    golden["dequant"].append({"type": name, "n": n, "src": b64(src), "out": b64(dequant(name, src, n))})
    suffix = name.lower() + "_q8_K"
    for n in (256, 768, 4096, 11008):
        w = rand_weights(name, n)
        a = q8k(rand_activations(n))
        golden["dot"].append({"type": name, "n": n, "w": b64(w), "a": b64(a),
                              "simd": vec_dot("ggml_vec_dot_" + suffix, n, w, a),
                              "generic": vec_dot("ggml_vec_dot_%s_generic" % suffix, n, w, a)})

with open(OUT, "w") as f:
    json.dump(golden, f, indent=0)
    f.write("\n")
print("wrote", OUT, os.path.getsize(OUT), "bytes")
