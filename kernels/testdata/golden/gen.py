#!/usr/bin/env python3
"""Regenerate kernels/testdata/golden/ggml.json from llama.cpp's own ggml.

The oracle is the prebuilt ggml shipped by node-llama-cpp (the reference
harness, see ../shared/ref): libggml-base.so exports ggml's reference
dequantize_row_* / quantize_row_*_ref and the f16/bf16 row converters, and a
libggml-cpu-*.so exports the CPU backend's ggml_vec_dot_* (SIMD) and
ggml_vec_dot_*_generic (scalar) routines. This script feeds them seeded random
inputs through ctypes and records inputs and outputs bit for bit. No ggml code
is copied; the Go tests only compare against the recorded bytes.

usage: python3 gen.py [LIBDIR] [CPU_VARIANT]
  LIBDIR defaults to /work/ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
  CPU_VARIANT defaults to haswell (AVX2+FMA+F16C); e.g. zen4 for AVX-512.
"""
import base64
import ctypes
import json
import os
import random
import struct
import sys

LIBDIR = sys.argv[1] if len(sys.argv) > 1 else "/work/ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
VARIANT = sys.argv[2] if len(sys.argv) > 2 else "haswell"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ggml.json")

base = ctypes.CDLL(os.path.join(LIBDIR, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
cpu = ctypes.CDLL(os.path.join(LIBDIR, "libggml-cpu-%s.so" % VARIANT), mode=ctypes.RTLD_GLOBAL)
cpu.ggml_cpu_init()

# name: (block elements, block bytes, offsets of fp16 scale fields)
TYPES = {
    "F32": (1, 4, []), "F16": (1, 2, []), "BF16": (1, 2, []),
    "Q4_0": (32, 18, [0]), "Q4_1": (32, 20, [0, 2]), "Q5_0": (32, 22, [0]), "Q5_1": (32, 24, [0, 2]),
    "Q8_0": (32, 34, [0]), "Q8_1": (32, 36, [0, 2]),
    "Q2_K": (256, 84, [80, 82]), "Q3_K": (256, 110, [108]), "Q4_K": (256, 144, [0, 2]),
    "Q5_K": (256, 176, [0, 2]), "Q6_K": (256, 210, [208]), "Q8_K": (256, 292, []),
}
ACT = {"Q4_0": "Q8_0", "Q5_0": "Q8_0", "Q8_0": "Q8_0", "Q4_1": "Q8_1", "Q5_1": "Q8_1",
       "Q2_K": "Q8_K", "Q3_K": "Q8_K", "Q4_K": "Q8_K", "Q5_K": "Q8_K", "Q6_K": "Q8_K",
       "F32": "F32", "F16": "F16", "BF16": "BF16"}

rng = random.Random(20261202)


def b64(b):
    return base64.b64encode(bytes(b)).decode()


def f32bytes(xs):
    return struct.pack("<%df" % len(xs), *xs)


def rand_activations(n):
    xs = []
    for _ in range(n):
        v = rng.gauss(0, 1)
        if rng.randrange(97) == 0:
            v *= 20
        xs.append(struct.unpack("<f", struct.pack("<f", v))[0])
    return xs


def rand_weights(name, n):
    bs, ts, scales = TYPES[name]
    nb = n // bs
    if bs == 1:
        xs = rand_activations(n)
        buf = (ctypes.c_char * (n * ts))()
        quantize_float(name, xs, buf)
        return bytes(buf)
    out = bytearray(rng.getrandbits(8) for _ in range(nb * ts))
    for b in range(nb):
        for k, off in enumerate(scales):
            v = (1 + rng.random()) * 2.0 ** (-4 - rng.randrange(9))
            if k == 0 and rng.randrange(4) == 0:
                v = -v
            out[b * ts + off:b * ts + off + 2] = struct.pack("<e", v)
    return bytes(out)


def quantize_float(name, xs, buf):
    n = len(xs)
    src = (ctypes.c_float * n)(*xs)
    if name == "F32":
        ctypes.memmove(buf, src, 4 * n)
    elif name == "F16":
        base.ggml_fp32_to_fp16_row(src, buf, ctypes.c_int64(n))
    elif name == "BF16":
        base.ggml_fp32_to_bf16_row_ref(src, buf, ctypes.c_int64(n))


def dequant(name, src, n):
    out = (ctypes.c_float * n)()
    fn = {"F16": base.ggml_fp16_to_fp32_row, "BF16": base.ggml_bf16_to_fp32_row}.get(name)
    if name == "F32":
        return src
    if fn is None:
        fn = getattr(base, "dequantize_row_" + name.lower().replace("_k", "_K"))
    fn(ctypes.c_char_p(src), out, ctypes.c_int64(n))
    return bytes(out)


def quantize(name, xs):
    bs, ts, _ = TYPES[name]
    n = len(xs)
    buf = (ctypes.c_char * (n // bs * ts))()
    if bs == 1:
        quantize_float(name, xs, buf)
    else:
        fn = getattr(base, "quantize_row_" + name.lower().replace("_k", "_K") + "_ref")
        fn((ctypes.c_float * n)(*xs), buf, ctypes.c_int64(n))
    return bytes(buf)


def vec_dot(fname, n, w, a):
    s = ctypes.c_float()
    fn = getattr(cpu, fname)
    fn(ctypes.c_int(n), ctypes.byref(s), ctypes.c_size_t(0), ctypes.c_char_p(w), ctypes.c_size_t(0),
       ctypes.c_char_p(a), ctypes.c_size_t(0), ctypes.c_int(1))
    return struct.unpack("<I", struct.pack("<f", s.value))[0]


def special_inputs(bs):
    """Blocks that probe rounding: ties at d = 1, zeros, one outlier."""
    n = max(bs, 32)
    ties = [0.0] * n
    ties[0] = 127.0
    for i in range(1, n):
        ties[i] = (i % 20) - 9.5
    zeros = [0.0] * n
    outlier = [0.001 * (i % 7) for i in range(n)]
    outlier[n // 2] = -300.0
    q4ties = [(i % 17) - 8.0 + 0.5 * (i % 2) for i in range(n)]
    q4ties[0] = -8.0
    return [ties, zeros, outlier, q4ties]


golden = {"generator": "kernels/testdata/golden/gen.py", "oracle": "node-llama-cpp 3.21.1 prebuilt ggml (llama.cpp release v0.4.0 per _nlcBuildMetadata.json), cpu variant " + VARIANT,
          "dequant": [], "quant": [], "dot": []}

for name, (bs, ts, _) in TYPES.items():
    if name == "Q8_1":
        continue  # ggml has no dequantize_row_q8_1 (Q8_1 is only ever a dot operand)
    for nblocks in (1, 3):
        n = bs * nblocks if bs > 1 else 37 * nblocks
        if name == "Q8_K":
            src = quantize("Q8_K", rand_activations(n))
        elif name == "Q8_1":
            src = quantize("Q8_1", rand_activations(n))
        else:
            src = rand_weights(name, n)
        golden["dequant"].append({"type": name, "n": n, "src": b64(src), "out": b64(dequant(name, src, n))})

# F16/BF16 special values for the row converters.
specials = [0.0, -0.0, 1.0, -2.5, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25,
            3 * 2.0 ** -25, 6.1e-5, 1e-10, float("inf"), float("-inf"), 3.0e38, 1.17549435e-38, 1e-45]
for name in ("F16", "BF16"):
    golden["quant"].append({"type": name, "n": len(specials), "src": b64(f32bytes(specials)),
                            "out": b64(quantize(name, specials))})

for name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q8_K", "F16", "BF16"):
    bs = TYPES[name][0]
    inputs = [rand_activations(bs if bs > 1 else 64), rand_activations(4 * max(bs, 32))]
    if bs > 1:
        inputs += special_inputs(bs)
    for k, xs in enumerate(inputs):
        rec = {"type": name, "n": len(xs), "src": b64(f32bytes(xs)), "out": b64(quantize(name, xs))}
        if k < 2 and name in ("Q8_0", "Q8_1", "Q8_K"):
            # What llama.cpp actually runs on this CPU for activations (SIMD
            # quantize_row_q8_*: round-half-even, 127/amax). It agrees with the
            # reference except on exact ties, which random inputs never hit.
            nbytes = len(base64.b64decode(rec["out"]))
            buf = (ctypes.c_char * nbytes)()
            getattr(cpu, "quantize_row_" + name.lower().replace("_k", "_K"))((ctypes.c_float * len(xs))(*xs), buf, ctypes.c_int64(len(xs)))
            rec["runtime"] = b64(bytes(buf))
        golden["quant"].append(rec)

DOTS = {"Q4_0": "q4_0_q8_0", "Q4_1": "q4_1_q8_1", "Q5_0": "q5_0_q8_0", "Q5_1": "q5_1_q8_1", "Q8_0": "q8_0_q8_0",
        "Q2_K": "q2_K_q8_K", "Q3_K": "q3_K_q8_K", "Q4_K": "q4_K_q8_K", "Q5_K": "q5_K_q8_K", "Q6_K": "q6_K_q8_K",
        "F32": "f32", "F16": "f16", "BF16": "bf16"}
for name, suffix in DOTS.items():
    bs = TYPES[name][0]
    for n in ([bs, 3 * bs, 4096] if bs > 1 else [64, 4096]):
        w = rand_weights(name, n)
        a = quantize(ACT[name], rand_activations(n))
        rec = {"type": name, "n": n, "w": b64(w), "a": b64(a), "simd": vec_dot("ggml_vec_dot_" + suffix, n, w, a)}
        if hasattr(cpu, "ggml_vec_dot_%s_generic" % suffix):
            rec["generic"] = vec_dot("ggml_vec_dot_%s_generic" % suffix, n, w, a)
        golden["dot"].append(rec)

# IQ4_NL / IQ4_XS (non-linear 4-bit codebook; dotted with Q8_0 / Q8_K as in
# ggml's type traits). Generated after everything above from their own seed,
# so adding them left every earlier vector byte-identical.
rng = random.Random(20261203)
TYPES["IQ4_NL"] = (32, 18, [0])
TYPES["IQ4_XS"] = (256, 136, [0])
ACT.update({"IQ4_NL": "Q8_0", "IQ4_XS": "Q8_K"})
for name in ("IQ4_NL", "IQ4_XS"):
    bs = TYPES[name][0]
    for nblocks in (1, 3, 8):
        n = bs * nblocks
        src = rand_weights(name, n)
        golden["dequant"].append({"type": name, "n": n, "src": b64(src), "out": b64(dequant(name, src, n))})
for name, suffix in (("IQ4_NL", "iq4_nl_q8_0"), ("IQ4_XS", "iq4_xs_q8_K")):
    bs = TYPES[name][0]
    for n in (bs, 3 * bs, 4096, 11008 if 11008 % bs == 0 else 14336):
        w = rand_weights(name, n)
        a = quantize(ACT[name], rand_activations(n))
        golden["dot"].append({"type": name, "n": n, "w": b64(w), "a": b64(a),
                              "simd": vec_dot("ggml_vec_dot_" + suffix, n, w, a),
                              "generic": vec_dot("ggml_vec_dot_%s_generic" % suffix, n, w, a)})

# MXFP4 (E8M0 exponent byte, 16 bytes of E2M1 codes; dotted with Q8_0 as in
# ggml's type traits). Its own seed, after everything above, so the earlier
# vectors stay byte-identical. The exponent byte is no fp16 field: blocks get
# exponents around 127 (scales near 1) for the dots, and the dequant vectors
# also carry the extremes (0 and 1 decode to subnormals, 254 to 2^126).
rng = random.Random(20261205)
TYPES["MXFP4"] = (32, 17, [])
ACT["MXFP4"] = "Q8_0"


def rand_mxfp4(n, exps):
    out = bytearray(rng.getrandbits(8) for _ in range(n // 32 * 17))
    for b in range(n // 32):
        out[b * 17] = rng.choice(exps)
    return bytes(out)


for nblocks in (1, 3, 8):
    src = rand_mxfp4(32 * nblocks, list(range(100, 150)))
    golden["dequant"].append({"type": "MXFP4", "n": 32 * nblocks, "src": b64(src), "out": b64(dequant("MXFP4", src, 32 * nblocks))})
ext = rand_mxfp4(32 * 8, [0])
ext = bytearray(ext)
for b, e in enumerate((0, 1, 2, 3, 126, 127, 253, 254)):
    ext[b * 17] = e
golden["dequant"].append({"type": "MXFP4", "n": 256, "src": b64(ext), "out": b64(dequant("MXFP4", bytes(ext), 256))})

# Quantization: random rows, the shared rounding probes, and blocks whose
# largest magnitude sits within a few f32 ulps of a power of two (where
# floorf(log2f(amax)) decides the exponent) or is subnormal.
mx_inputs = [rand_activations(32), rand_activations(4 * 32)] + special_inputs(32)
near = []
for k in range(-20, 21, 3):
    p = 2.0 ** k
    for steps in (-3, -2, -1, 0, 1, 2):
        v = struct.unpack("<f", struct.pack("<f", p))[0]
        bits = struct.unpack("<I", struct.pack("<f", v))[0] + steps
        v = struct.unpack("<f", struct.pack("<I", bits))[0]
        blk = [rng.uniform(-1, 1) * v * 0.7 for _ in range(32)]
        blk[rng.randrange(32)] = v if rng.randrange(2) else -v
        near += [struct.unpack("<f", struct.pack("<f", x))[0] for x in blk]
mx_inputs.append(near)
tiny = [rng.uniform(-1, 1) * 1e-39 for _ in range(32)] + [rng.uniform(-1, 1) * 1e-44 for _ in range(32)]
mx_inputs.append([struct.unpack("<f", struct.pack("<f", x))[0] for x in tiny])
# Exact midpoints between adjacent table values (ties go to the lower code).
d = 2.0 ** -3
mids = [(a + b) / 2 * d for a, b in ((0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 8), (8, 12))]
tie = [12 * d] + mids + [-m for m in mids] + [0.0, -0.0] + [m * 1.0000001 for m in mids]
tie += [0.0] * (32 - len(tie) % 32 if len(tie) % 32 else 0)
mx_inputs.append(tie)
for xs in mx_inputs:
    golden["quant"].append({"type": "MXFP4", "n": len(xs), "src": b64(f32bytes(xs)), "out": b64(quantize("MXFP4", xs))})

for n in (32, 96, 4096, 11008):
    w = rand_mxfp4(n, list(range(115, 135)))
    a = quantize("Q8_0", rand_activations(n))
    golden["dot"].append({"type": "MXFP4", "n": n, "w": b64(w), "a": b64(a),
                          "simd": vec_dot("ggml_vec_dot_mxfp4_q8_0", n, w, a),
                          "generic": vec_dot("ggml_vec_dot_mxfp4_q8_0_generic", n, w, a)})

# TQ1_0 / TQ2_0 (ternary; dotted with Q8_K as in ggml's type traits). Own
# seed, after everything above. Weights are random bytes with a random fp16
# d (TQ2_0's unused code 3 and TQ1_0's bytes past 242 included: the decoders
# are defined for every byte).
rng = random.Random(20261206)
TYPES["TQ1_0"] = (256, 54, [52])
TYPES["TQ2_0"] = (256, 66, [64])
ACT.update({"TQ1_0": "Q8_K", "TQ2_0": "Q8_K"})
for name in ("TQ1_0", "TQ2_0"):
    for nblocks in (1, 3):
        n = 256 * nblocks
        src = rand_weights(name, n)
        golden["dequant"].append({"type": name, "n": n, "src": b64(src), "out": b64(dequant(name, src, n))})
    tq_inputs = [rand_activations(256), rand_activations(3 * 256)]
    # Rounding probes: values at exactly ±amax/2 (lroundf ties away from
    # zero), just below, zeros, an all-zero block.
    tie = [0.0] * 256
    tie[0] = 2.0
    for i in range(1, 256):
        tie[i] = [1.0, -1.0, 0.99999994, -0.99999994, 0.0, 2.0, -2.0, 0.5][i % 8]
    tq_inputs += [tie, [0.0] * 256]
    for xs in tq_inputs:
        golden["quant"].append({"type": name, "n": len(xs), "src": b64(f32bytes(xs)), "out": b64(quantize(name, xs))})
for name, suffix in (("TQ1_0", "tq1_0_q8_K"), ("TQ2_0", "tq2_0_q8_K")):
    for n in (256, 768, 4096, 11008 if 11008 % 256 == 0 else 14336):
        w = rand_weights(name, n)
        a = quantize("Q8_K", rand_activations(n))
        golden["dot"].append({"type": name, "n": n, "w": b64(w), "a": b64(a),
                              "simd": vec_dot("ggml_vec_dot_" + suffix, n, w, a),
                              "generic": vec_dot("ggml_vec_dot_%s_generic" % suffix, n, w, a)})

with open(OUT, "w") as f:
    json.dump(golden, f, indent=0)
    f.write("\n")
print("wrote", OUT, os.path.getsize(OUT), "bytes")
