//go:build ignore

// gengemmk512 writes gemmk512_amd64.s: the AVX-512 VNNI packed K-quant
// kernels (gemmk512_amd64.go). Run with go generate ./kernels/.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

// tok is token t's activation address at byte offset off within the current
// super-block: DI, DI+as, DI+2as, DI+3as, R8 = DI+4as, ... (R10 = 3·as).
func tok(t, off int) string {
	base := "DI"
	if t >= 4 {
		base, t = "R8", t-4
	}
	switch t {
	case 0:
		return fmt.Sprintf("%d(%s)", off, base)
	case 1:
		return fmt.Sprintf("%d(%s)(R9*1)", off, base)
	case 2:
		return fmt.Sprintf("%d(%s)(R9*2)", off, base)
	}
	return fmt.Sprintf("%d(%s)(R10*1)", off, base)
}

// Registers for T ≤ 8 tokens: acc Z8+t (a sub-block's or group's int32
// sums, later the min / offset sums), isum Z16+t, f Z24+t.
func acc(t int) string  { return fmt.Sprintf("Z%d", 8+t) }
func isum(t int) string { return fmt.Sprintf("Z%d", 16+t) }
func facc(t int) string { return fmt.Sprintf("Z%d", 24+t) }

// yaddr sets DX as needed and returns token t's output address (R14 + t·BX).
func yaddr(t int) string {
	switch t {
	case 0:
		return "(R14)"
	case 1:
		return "(R14)(BX*1)"
	case 2:
		return "(R14)(BX*2)"
	case 3:
		p("LEAQ (R14)(BX*2), DX")
		return "(DX)(BX*1)"
	case 4:
		return "(R14)(BX*4)"
	case 5:
		p("LEAQ (R14)(BX*4), DX")
		return "(DX)(BX*1)"
	case 6:
		p("LEAQ (R14)(BX*4), DX")
		return "(DX)(BX*2)"
	}
	p("LEAQ (R14)(BX*4), DX")
	p("LEAQ (DX)(BX*2), DX")
	return "(DX)(BX*1)"
}

// dots accumulates the weight vectors v0..v0+nv-1 against activation bytes
// at aoff.. into acc(t) for every token, zeroing the accumulators first.
func dots(T, v0, nv, aoff int) {
	for t := 0; t < T; t++ {
		p("VPXORD %s, %s, %s", acc(t), acc(t), acc(t))
	}
	for j := 0; j < nv; j++ {
		w := []string{"Z1", "Z2"}[j%2]
		p("VMOVDQU64 %d(SI), %s", 64*(v0+j), w)
		for t := 0; t < T; t++ {
			p("VPDPBUSD.BCST %s, %s, %s", tok(t, aoff+4*j), w, acc(t))
		}
	}
}

// scale multiplies acc(t) by the int32 scale of the (sc, sc) int16 pairs at
// off(SI) (sign-extended) and adds it to isum(t) (sets it when first).
func scale(T, off int, first bool) {
	p("VPSRAD $16, %d(SI), Z0", off)
	for t := 0; t < T; t++ {
		if first {
			p("VPMULLD Z0, %s, %s", acc(t), isum(t))
		} else {
			p("VPMULLD Z0, %s, %s", acc(t), acc(t))
			p("VPADDD %s, %s, %s", acc(t), isum(t), isum(t))
		}
	}
}

// pairs sets acc(t) = Σ_k VPDPWSSD(int16 pairs at off+64k(SI), the token's
// bsums 2k, 2k+1), k < 8.
func pairs(T, off int) {
	for t := 0; t < T; t++ {
		p("VPXORD %s, %s, %s", acc(t), acc(t), acc(t))
	}
	for k := 0; k < 8; k++ {
		m := []string{"Z1", "Z2"}[k%2]
		p("VMOVDQU64 %d(SI), %s", off+64*k, m)
		for t := 0; t < T; t++ {
			p("VPDPWSSD.BCST %s, %s, %s", tok(t, 260+4*k), m, acc(t))
		}
	}
}

// finish adds fl(d_w·d_a)·isum(t) to f(t), with d_w at doff(SI), and when
// dminoff ≥ 0 subtracts fl(dmin·d_a)·acc(t) (the min sums).
func finish(T, doff, dminoff int) {
	p("VMOVUPS %d(SI), Z1", doff)
	if dminoff >= 0 {
		p("VMOVUPS %d(SI), Z2", dminoff)
	}
	for t := 0; t < T; t++ {
		tmp := fmt.Sprintf("Z%d", 3+t%5)
		p("VMULPS.BCST %s, Z1, %s", tok(t, 0), tmp)
		p("VCVTDQ2PS %s, %s", isum(t), isum(t))
		p("VFMADD231PS %s, %s, %s", tmp, isum(t), facc(t))
		if dminoff >= 0 {
			p("VMULPS.BCST %s, Z2, %s", tok(t, 0), tmp)
			p("VCVTDQ2PS %s, %s", acc(t), acc(t))
			p("VFNMADD231PS %s, %s, %s", tmp, acc(t), facc(t))
		}
	}
}

type kind struct {
	name   string
	blockB int
	body   func(T int)
}

// q4k: Q4_K/Q5_K layout (gemmk.go): 8 sub-blocks of 8 vectors, scales at
// 4096, mins at 4608, d at 5120, dmin at 5184.
func q4k(T int) {
	for s := 0; s < 8; s++ {
		dots(T, 8*s, 8, 4+32*s)
		scale(T, 4096+64*s, s == 0)
	}
	pairs(T, 4608)
	finish(T, 5120, 5184)
}

// q6k: Q6_K layout: 16 groups of 4 vectors, scales at 4096, offset pairs at
// 5120, d at 5632.
func q6k(T int) {
	for g := 0; g < 16; g++ {
		dots(T, 4*g, 4, 4+16*g)
		scale(T, 4096+64*g, g == 0)
	}
	pairs(T, 5120)
	for t := 0; t < T; t++ {
		p("VPSLLD $5, %s, %s", acc(t), acc(t))
		p("VPSUBD %s, %s, %s", acc(t), isum(t), isum(t))
	}
	finish(T, 5632, -1)
}

// q2k: Q2_K layout (gemmkq2q3.go): Q6_K's groups and scales without the
// offset, the min pairs at 5120, d at 5632, dmin at 5696.
func q2k(T int) {
	for g := 0; g < 16; g++ {
		dots(T, 4*g, 4, 4+16*g)
		scale(T, 4096+64*g, g == 0)
	}
	pairs(T, 5120)
	finish(T, 5632, 5696)
}

func kernel(k kind) {
	n := k.name
	fmt.Fprintf(&out, "\n// func %s(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)\n", n)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-88\n", n)
	p("MOVQ a+16(FP), R12")
	p("MOVQ as+24(FP), R9")
	p("MOVQ y+48(FP), R14")
	p("MOVQ ys+56(FP), BX")
	p("MOVQ ntok+64(FP), AX")
	p("MOVQ mask+72(FP), DX")
	p("KMOVW DX, K1")
	p("LEAQ (R9)(R9*2), R10")
	groups := []int{8, 4, 2, 1}
	for i, T := range groups {
		pre := fmt.Sprintf("%s_%d", n, T)
		next := n + "_done"
		if i+1 < len(groups) {
			next = fmt.Sprintf("%s_%d", n, groups[i+1])
		}
		label(pre)
		p("CMPQ AX, $%d", T)
		p("JLT %s", next)
		p("MOVQ first+80(FP), DX")
		p("TESTQ DX, DX")
		p("JNZ %s_zero", pre)
		for t := 0; t < T; t++ {
			a := yaddr(t)
			p("VMOVUPS.Z %s, K1, %s", a, facc(t))
		}
		p("JMP %s_start", pre)
		label(pre + "_zero")
		for t := 0; t < T; t++ {
			p("VPXORD %s, %s, %s", facc(t), facc(t), facc(t))
		}
		label(pre + "_start")
		p("MOVQ nblk+0(FP), CX")
		p("MOVQ pw+8(FP), SI")
		p("MOVQ R12, DI")
		p("LEAQ (R12)(R9*4), R8")
		p("TESTQ CX, CX")
		p("JZ %s_store", pre)
		label(pre + "_loop")
		k.body(T)
		p("ADDQ $%d, SI", k.blockB)
		p("ADDQ $292, DI")
		p("ADDQ $292, R8")
		p("DECQ CX")
		p("JNZ %s_loop", pre)
		label(pre + "_store")
		for t := 0; t < T; t++ {
			a := yaddr(t)
			p("VMOVUPS %s, K1, %s", facc(t), a)
		}
		for t := 0; t < T; t++ {
			p("ADDQ R9, R12")
			p("ADDQ BX, R14")
		}
		p("SUBQ $%d, AX", T)
		p("JMP %s", pre)
	}
	label(n + "_done")
	p("VZEROUPPER")
	p("RET")
}

// packQ4K writes gemmPackQ4KAVX512 (q5: gemmPackQ5KAVX512): packQ4K's
// (packQ5K's) layout (gemmk.go), the scale fields by dword gathers across
// the 16 rows (Z31 = row offsets r·ws), the quants by chunk4.
func packQ4K(q5 bool) {
	name, bs, qoff := "gemmPackQ4KAVX512", 144, 16
	if q5 {
		name, bs, qoff = "gemmPackQ5KAVX512", 176, 48
	}
	if !q5 {
		out.WriteString(`
// Byte-shuffle controls for the Q4_K scale / min pairs: dword lane k of a
// 128-bit lane gets (byte 4k+s, 0, byte 4k+s, 0), the int16 pair (v, v).
DATA q4kPair<>+0(SB)/8, $0x8004800480008000
DATA q4kPair<>+8(SB)/8, $0x800c800c80088008
DATA q4kPair<>+16(SB)/8, $0x8005800580018001
DATA q4kPair<>+24(SB)/8, $0x800d800d80098009
DATA q4kPair<>+32(SB)/8, $0x8006800680028002
DATA q4kPair<>+40(SB)/8, $0x800e800e800a800a
DATA q4kPair<>+48(SB)/8, $0x8007800780038003
DATA q4kPair<>+56(SB)/8, $0x800f800f800b800b
GLOBL q4kPair<>(SB), RODATA|NOPTR, $64

DATA q4kIota<>+0(SB)/8, $0x0000000100000000
DATA q4kIota<>+8(SB)/8, $0x0000000300000002
DATA q4kIota<>+16(SB)/8, $0x0000000500000004
DATA q4kIota<>+24(SB)/8, $0x0000000700000006
DATA q4kIota<>+32(SB)/8, $0x0000000900000008
DATA q4kIota<>+40(SB)/8, $0x0000000b0000000a
DATA q4kIota<>+48(SB)/8, $0x0000000d0000000c
DATA q4kIota<>+56(SB)/8, $0x0000000f0000000e
GLOBL q4kIota<>(SB), RODATA|NOPTR, $64

DATA q4k0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL q4k0f<>(SB), RODATA|NOPTR, $4
DATA q4k3f<>+0(SB)/4, $0x3f3f3f3f
GLOBL q4k3f<>(SB), RODATA|NOPTR, $4
DATA q4k03<>+0(SB)/4, $0x03030303
GLOBL q4k03<>(SB), RODATA|NOPTR, $4
DATA q4k10<>+0(SB)/4, $0x10101010
GLOBL q4k10<>(SB), RODATA|NOPTR, $4
DATA q4k30<>+0(SB)/4, $0x30303030
GLOBL q4k30<>(SB), RODATA|NOPTR, $4

// Dword transpose of four 16-byte row chunks (gemm_amd64.s's q4A, q4B):
// VPERMI2D of rows 0..3 | 4..7 gives [dword 0 of rows 0..7 | dword 1 of
// rows 0..7] (q6kTA) and the same for dwords 2, 3 (q6kTB).
DATA q6kTA<>+0(SB)/8, $0x0000000400000000
DATA q6kTA<>+8(SB)/8, $0x0000000c00000008
DATA q6kTA<>+16(SB)/8, $0x0000001400000010
DATA q6kTA<>+24(SB)/8, $0x0000001c00000018
DATA q6kTA<>+32(SB)/8, $0x0000000500000001
DATA q6kTA<>+40(SB)/8, $0x0000000d00000009
DATA q6kTA<>+48(SB)/8, $0x0000001500000011
DATA q6kTA<>+56(SB)/8, $0x0000001d00000019
GLOBL q6kTA<>(SB), RODATA|NOPTR, $64
DATA q6kTB<>+0(SB)/8, $0x0000000600000002
DATA q6kTB<>+8(SB)/8, $0x0000000e0000000a
DATA q6kTB<>+16(SB)/8, $0x0000001600000012
DATA q6kTB<>+24(SB)/8, $0x0000001e0000001a
DATA q6kTB<>+32(SB)/8, $0x0000000700000003
DATA q6kTB<>+40(SB)/8, $0x0000000f0000000b
DATA q6kTB<>+48(SB)/8, $0x0000001700000013
DATA q6kTB<>+56(SB)/8, $0x0000001f0000001b
GLOBL q6kTB<>(SB), RODATA|NOPTR, $64
`)
	}
	fmt.Fprintf(&out, "\n// func %s(nblk int, w *byte, ws int, dst *byte)\nTEXT ·%s(SB), NOSPLIT, $0-32\n", name, name)
	packPrologue()
	pl := strings.ToLower(name)
	p("VMOVDQU64 q6kTA<>(SB), Z28")
	p("VMOVDQU64 q6kTB<>(SB), Z29")
	for s := 0; s < 4; s++ {
		p("VBROADCASTI32X4 q4kPair<>+%d(SB), Z%d", 16*s, 24+s)
	}
	p("TESTQ CX, CX")
	p("JZ %sdone", pl)
	label(pl + "loop")
	packPrefetch()
	// d, dmin.
	gather(0, "Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5120)
	p("VPSRLD $16, Z0, Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5184)
	// Scales and mins (q4kScalesMins): Z4 = sc 0..3, Z5 = sc 4..7, Z6 =
	// min 0..3, Z7 = min 4..7, one byte per (lane, sub-block).
	gather(4, "Z0")
	gather(8, "Z1")
	gather(12, "Z2")
	p("VPANDD.BCST q4k3f<>(SB), Z0, Z4")
	p("VPANDD.BCST q4k3f<>(SB), Z1, Z6")
	p("VPSRLD $6, Z0, Z0")
	p("VPANDD.BCST q4k03<>(SB), Z0, Z0")
	p("VPSLLD $4, Z0, Z0")
	p("VPANDD Z30, Z2, Z5")
	p("VPORD Z0, Z5, Z5")
	p("VPSRLD $6, Z1, Z1")
	p("VPANDD.BCST q4k03<>(SB), Z1, Z1")
	p("VPSLLD $4, Z1, Z1")
	p("VPSRLD $4, Z2, Z2")
	p("VPANDD Z30, Z2, Z7")
	p("VPORD Z1, Z7, Z7")
	for s := 0; s < 8; s++ {
		sc, mn := "Z4", "Z6"
		if s >= 4 {
			sc, mn = "Z5", "Z7"
		}
		p("VPSHUFB Z%d, %s, Z8", 24+s%4, sc)
		p("VMOVDQU64 Z8, %d(DI)", 4096+64*s)
		p("VPSHUFB Z%d, %s, Z9", 24+s%4, mn)
		p("VMOVDQU64 Z9, %d(DI)", 4608+64*s)
	}
	// Quants: dword j of chunk c (32 bytes at qoff+32c) holds elements
	// 32·2c+4j.. (low nibbles) and 32·(2c+1)+4j.. (high); for Q5_K their
	// fifth bits are bits 2c and 2c+1 of qh dword j (at 16+4j, Z16+j).
	if q5 {
		chunk4(16, 16)
		chunk4(32, 20)
	}
	// hbit moves bit b of each byte of qh dword j to bit 4 into Z8.
	hbit := func(j, b int) {
		h := fmt.Sprintf("Z%d", 16+j)
		switch {
		case b < 4:
			p("VPSLLD $%d, %s, Z8", 4-b, h)
		case b == 4:
			p("VMOVDQA64 %s, Z8", h)
		default:
			p("VPSRLD $%d, %s, Z8", b-4, h)
		}
		p("VPANDD.BCST q4k10<>(SB), Z8, Z8")
	}
	for c := 0; c < 4; c++ {
		for j := 0; j < 8; j++ {
			if j%4 == 0 {
				chunk4(qoff+32*c+4*j, 10)
			}
			z := fmt.Sprintf("Z%d", 10+j%4)
			p("VPANDD Z30, %s, Z9", z)
			if q5 {
				hbit(j, 2*c)
				p("VPORD Z8, Z9, Z9")
			}
			p("VMOVDQU64 Z9, %d(DI)", 64*(8*(2*c)+j))
			p("VPSRLD $4, %s, %s", z, z)
			p("VPANDD Z30, %s, %s", z, z)
			if q5 {
				hbit(j, 2*c+1)
				p("VPORD Z8, %s, %s", z, z)
			}
			p("VMOVDQU64 %s, %d(DI)", z, 64*(8*(2*c+1)+j))
		}
	}
	packEpilogue(pl, bs, 5248)
}

// packPrologue: CX = blocks, SI, R8, R11, R12 = rows 0, 4, 8, 12 (R9 = ws,
// R10 = 3·ws), DI = dst, Z31 = gather offsets r·ws, Z30 = 0x0f bytes.
func packPrologue() {
	p("MOVQ nblk+0(FP), CX")
	p("MOVQ w+8(FP), SI")
	p("MOVQ ws+16(FP), R9")
	p("MOVQ dst+24(FP), DI")
	p("LEAQ (R9)(R9*2), R10")
	p("LEAQ (SI)(R9*4), R8")
	p("LEAQ (R8)(R9*4), R11")
	p("LEAQ (R11)(R9*4), R12")
	p("VMOVDQU64 q4kIota<>(SB), Z31")
	p("VPBROADCASTD R9, Z30")
	p("VPMULLD Z30, Z31, Z31")
	p("VPBROADCASTD q4k0f<>(SB), Z30")
}

// packPrefetch hints three lines per row 576 bytes (2.6-4 super-blocks)
// ahead: the 16 rows are concurrent streams from the mapping.
func packPrefetch() {
	for _, d := range []int{576, 640, 704} {
		for _, b := range []string{"SI", "R8", "R11", "R12"} {
			p("PREFETCHT0 %d(%s)", d, b)
			p("PREFETCHT0 %d(%s)(R9*1)", d, b)
			p("PREFETCHT0 %d(%s)(R9*2)", d, b)
			p("PREFETCHT0 %d(%s)(R10*1)", d, b)
		}
	}
}

// gather loads the dword at off of each of the 16 rows' super-block into z.
func gather(off int, z string) {
	p("KXNORW K1, K1, K1")
	p("VPXORD %s, %s, %s", z, z, z)
	p("VPGATHERDD %d(SI)(Z31*1), K1, %s", off, z)
}

// chunk4 sets Z(z)..Z(z+3) to dwords 0..3 of the 16 bytes at off of each
// row (lane r = row r), by loads of four rows per register and the q6kTA /
// q6kTB transpose (Z28, Z29); Z0..Z7 are scratch.
func chunk4(off, z int) {
	for g, base := range []string{"SI", "R8", "R11", "R12"} {
		p("VMOVDQU %d(%s), X%d", off, base, g)
		p("VINSERTI32X4 $1, %d(%s)(R9*1), Z%d, Z%d", off, base, g, g)
		p("VINSERTI32X4 $2, %d(%s)(R9*2), Z%d, Z%d", off, base, g, g)
		p("VINSERTI32X4 $3, %d(%s)(R10*1), Z%d, Z%d", off, base, g, g)
	}
	p("VMOVDQA64 Z28, Z4")
	p("VPERMI2D Z1, Z0, Z4")
	p("VMOVDQA64 Z29, Z5")
	p("VPERMI2D Z1, Z0, Z5")
	p("VMOVDQA64 Z28, Z6")
	p("VPERMI2D Z3, Z2, Z6")
	p("VMOVDQA64 Z29, Z7")
	p("VPERMI2D Z3, Z2, Z7")
	p("VSHUFI64X2 $0x44, Z6, Z4, Z%d", z)
	p("VSHUFI64X2 $0xEE, Z6, Z4, Z%d", z+1)
	p("VSHUFI64X2 $0x44, Z7, Z5, Z%d", z+2)
	p("VSHUFI64X2 $0xEE, Z7, Z5, Z%d", z+3)
}

// packQ3K writes gemmPackQ3KAVX512: packQ3K's Q6_K-layout packing
// (gemmkq2q3.go), d and the scale words by dword gathers, qs and hmask by
// chunk4.
func packQ3K() {
	out.WriteString(`
DATA q3k20<>+0(SB)/4, $0x20202020
GLOBL q3k20<>(SB), RODATA|NOPTR, $4
DATA q3k1c<>+0(SB)/4, $0x1c1c1c1c
GLOBL q3k1c<>(SB), RODATA|NOPTR, $4
DATA q3k04<>+0(SB)/4, $0x04040404
GLOBL q3k04<>(SB), RODATA|NOPTR, $4

// func gemmPackQ3KAVX512(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackQ3KAVX512(SB), NOSPLIT, $0-32
`)
	packPrologue()
	p("VMOVDQU64 q6kTA<>(SB), Z28")
	p("VMOVDQU64 q6kTB<>(SB), Z29")
	p("VPBROADCASTD q3k1c<>(SB), Z30")
	p("VPBROADCASTD q3k20<>(SB), Z9")
	for i := 0; i < 6; i++ {
		p("VBROADCASTI32X4 q6kPair<>+%d(SB), Z%d", 16*i, 22+i)
	}
	p("TESTQ CX, CX")
	p("JZ q3kpdone")
	label("q3kploop")
	packPrefetch()
	// d: the fp16 at 108, the high word of the dword at 106.
	gather(106, "Z0")
	p("VPSRLD $16, Z0, Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5632)
	// Scales (q3Scales): a0, a1, tmp at 96, 100, 104; w_i (Z4+i) holds
	// the 6-bit scales of groups 4i..4i+3, then − 32 as int8.
	gather(96, "Z0")
	gather(100, "Z1")
	gather(104, "Z2")
	for i, c := range []struct {
		src   string
		hi    bool // high nibbles
		shift int  // tmp bit pair to bits 4, 5: left 4, 2, 0, right 2
	}{{"Z0", false, 4}, {"Z1", false, 2}, {"Z0", true, 0}, {"Z1", true, -2}} {
		w := fmt.Sprintf("Z%d", 4+i)
		if c.hi {
			p("VPSRLD $4, %s, %s", c.src, w)
			p("VPANDD.BCST q4k0f<>(SB), %s, %s", w, w)
		} else {
			p("VPANDD.BCST q4k0f<>(SB), %s, %s", c.src, w)
		}
		switch {
		case c.shift > 0:
			p("VPSLLD $%d, Z2, Z3", c.shift)
			p("VPANDD.BCST q4k30<>(SB), Z3, Z3")
		case c.shift == 0:
			p("VPANDD.BCST q4k30<>(SB), Z2, Z3")
		default:
			p("VPSRLD $%d, Z2, Z3", -c.shift)
			p("VPANDD.BCST q4k30<>(SB), Z3, Z3")
		}
		p("VPORD Z3, %s, %s", w, w)
		p("VPSUBB Z9, %s, %s", w, w)
	}
	for i := 0; i < 4; i++ {
		w := fmt.Sprintf("Z%d", 4+i)
		for b := 0; b < 4; b++ {
			p("VPSHUFB Z%d, %s, Z1", 22+b, w)
			p("VPSRAW $8, Z1, Z1")
			p("VMOVDQU64 Z1, %d(DI)", 4096+64*(4*i+b))
		}
		for c := 0; c < 2; c++ {
			p("VPSHUFB Z%d, %s, Z1", 26+c, w)
			p("VPSRAW $8, Z1, Z1")
			p("VMOVDQU64 Z1, %d(DI)", 5120+64*(2*i+c))
		}
	}
	// Quants: element 128h+32j+4m.. (vector 32h+8j+m) takes bits 2j, 2j+1
	// of qs dword m (at 32+32h+4m) and bit 4h+j of hmask dword m (at 4m,
	// Z14+m), as v + 28.
	chunk4(0, 14)
	chunk4(16, 18)
	for h := 0; h < 2; h++ {
		for c := 0; c < 2; c++ {
			chunk4(32+32*h+16*c, 10)
			for mm := 0; mm < 4; mm++ {
				m := 4*c + mm
				q, hm := fmt.Sprintf("Z%d", 10+mm), fmt.Sprintf("Z%d", 14+m)
				for j := 0; j < 4; j++ {
					if j == 0 {
						p("VPANDD.BCST q4k03<>(SB), %s, Z0", q)
					} else {
						p("VPSRLD $%d, %s, Z0", 2*j, q)
						p("VPANDD.BCST q4k03<>(SB), Z0, Z0")
					}
					switch sh := 4*h + j; {
					case sh < 2:
						p("VPSLLD $%d, %s, Z1", 2-sh, hm)
						p("VPANDD.BCST q3k04<>(SB), Z1, Z1")
					case sh == 2:
						p("VPANDD.BCST q3k04<>(SB), %s, Z1", hm)
					default:
						p("VPSRLD $%d, %s, Z1", sh-2, hm)
						p("VPANDD.BCST q3k04<>(SB), Z1, Z1")
					}
					p("VPORD Z1, Z0, Z0")
					p("VPADDB Z30, Z0, Z0")
					p("VMOVDQU64 Z0, %d(DI)", 64*(32*h+8*j+m))
				}
			}
		}
	}
	packEpilogue("q3kp", 110, 5696)
}

// packQ2K writes gemmPackQ2KAVX512: packQ2K's layout (gemmkq2q3.go), d, dmin
// and the scale bytes by dword gathers, qs by chunk4.
func packQ2K() {
	out.WriteString(`
// Byte-shuffle controls for the Q2_K min pairs: dword lane k of a 128-bit
// lane gets (byte 4k+2c, 0, byte 4k+2c+1, 0), c < 2.
DATA q2kMin<>+0(SB)/8, $0x8005800480018000
DATA q2kMin<>+8(SB)/8, $0x800d800c80098008
DATA q2kMin<>+16(SB)/8, $0x8007800680038002
DATA q2kMin<>+24(SB)/8, $0x800f800e800b800a
GLOBL q2kMin<>(SB), RODATA|NOPTR, $32

// func gemmPackQ2KAVX512(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackQ2KAVX512(SB), NOSPLIT, $0-32
`)
	packPrologue()
	p("VMOVDQU64 q6kTA<>(SB), Z28")
	p("VMOVDQU64 q6kTB<>(SB), Z29")
	for s := 0; s < 4; s++ {
		p("VBROADCASTI32X4 q4kPair<>+%d(SB), Z%d", 16*s, 24+s)
	}
	p("VBROADCASTI32X4 q2kMin<>+0(SB), Z20")
	p("VBROADCASTI32X4 q2kMin<>+16(SB), Z21")
	p("TESTQ CX, CX")
	p("JZ q2kpdone")
	label("q2kploop")
	packPrefetch()
	// d, dmin: the dword at 80.
	gather(80, "Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5632)
	p("VPSRLD $16, Z0, Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5696)
	// Scale bytes 4i..4i+3 (dword i): low nibbles the groups' scales,
	// high nibbles their mins.
	for i := 0; i < 4; i++ {
		gather(4*i, "Z0")
		p("VPANDD Z30, Z0, Z2")
		p("VPSRLD $4, Z0, Z3")
		p("VPANDD Z30, Z3, Z3")
		for b := 0; b < 4; b++ {
			p("VPSHUFB Z%d, Z2, Z1", 24+b)
			p("VMOVDQU64 Z1, %d(DI)", 4096+64*(4*i+b))
		}
		for c := 0; c < 2; c++ {
			p("VPSHUFB Z%d, Z3, Z1", 20+c)
			p("VMOVDQU64 Z1, %d(DI)", 5120+64*(2*i+c))
		}
	}
	// Quants: element 128h+32j+4m.. (vector 32h+8j+m) takes bits 2j, 2j+1
	// of qs dword m (at 16+32h+4m).
	for h := 0; h < 2; h++ {
		for c := 0; c < 2; c++ {
			chunk4(16+32*h+16*c, 10)
			for mm := 0; mm < 4; mm++ {
				m := 4*c + mm
				q := fmt.Sprintf("Z%d", 10+mm)
				for j := 0; j < 4; j++ {
					if j == 0 {
						p("VPANDD.BCST q4k03<>(SB), %s, Z0", q)
					} else {
						p("VPSRLD $%d, %s, Z0", 2*j, q)
						p("VPANDD.BCST q4k03<>(SB), Z0, Z0")
					}
					p("VMOVDQU64 Z0, %d(DI)", 64*(32*h+8*j+m))
				}
			}
		}
	}
	packEpilogue("q2kp", 84, 5760)
}

func packEpilogue(pl string, bs, blockB int) {
	for _, r := range []string{"SI", "R8", "R11", "R12"} {
		p("ADDQ $%d, %s", bs, r)
	}
	p("ADDQ $%d, DI", blockB)
	p("DECQ CX")
	p("JNZ %sloop", pl)
	label(pl + "done")
	p("VZEROUPPER")
	p("RET")
}

// packQ6K writes gemmPackQ6KAVX512: packQ6K's layout, d and the scales by
// dword gathers, the quants by chunk4.
func packQ6K() {
	out.WriteString(`
// Byte-shuffle controls for the Q6_K scale pairs: dword lane k of a 128-bit
// lane gets (0, byte 4k+b, 0, byte 4k+b), for b < 4, then (0, byte 4k+2c,
// 0, byte 4k+2c+1) for c < 2; VPSRAW $8 sign-extends them to int16 pairs.
DATA q6kPair<>+0(SB)/8, $0x0480048000800080
DATA q6kPair<>+8(SB)/8, $0x0c800c8008800880
DATA q6kPair<>+16(SB)/8, $0x0580058001800180
DATA q6kPair<>+24(SB)/8, $0x0d800d8009800980
DATA q6kPair<>+32(SB)/8, $0x0680068002800280
DATA q6kPair<>+40(SB)/8, $0x0e800e800a800a80
DATA q6kPair<>+48(SB)/8, $0x0780078003800380
DATA q6kPair<>+56(SB)/8, $0x0f800f800b800b80
DATA q6kPair<>+64(SB)/8, $0x0580048001800080
DATA q6kPair<>+72(SB)/8, $0x0d800c8009800880
DATA q6kPair<>+80(SB)/8, $0x0780068003800280
DATA q6kPair<>+88(SB)/8, $0x0f800e800b800a80
GLOBL q6kPair<>(SB), RODATA|NOPTR, $96

// func gemmPackQ6KAVX512(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackQ6KAVX512(SB), NOSPLIT, $0-32
`)
	packPrologue()
	p("VMOVDQU64 q6kTA<>(SB), Z28")
	p("VMOVDQU64 q6kTB<>(SB), Z29")
	for i := 0; i < 6; i++ {
		p("VBROADCASTI32X4 q6kPair<>+%d(SB), Z%d", 16*i, 22+i)
	}
	p("TESTQ CX, CX")
	p("JZ q6kpdone")
	label("q6kploop")
	packPrefetch()
	// d: the fp16 at 208, gathered as the high word of the dword at 206
	// (the one at 208 would read past the 210-byte block).
	gather(206, "Z0")
	p("VPSRLD $16, Z0, Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5632)
	// Scales: dword i (at 192+4i) holds groups 4i..4i+3.
	for i := 0; i < 4; i++ {
		gather(192+4*i, "Z0")
		for b := 0; b < 4; b++ {
			p("VPSHUFB Z%d, Z0, Z1", 22+b)
			p("VPSRAW $8, Z1, Z1")
			p("VMOVDQU64 Z1, %d(DI)", 4096+64*(4*i+b))
		}
		for c := 0; c < 2; c++ {
			p("VPSHUFB Z%d, Z0, Z1", 26+c)
			p("VPSRAW $8, Z1, Z1")
			p("VMOVDQU64 Z1, %d(DI)", 5120+64*(2*i+c))
		}
	}
	// Quants: elements 128h+4l.. (vector 32h+l) and +32, +64, +96 (vectors
	// +8, +16, +24) from ql dwords at 64h+4l and 64h+32+4l and bit pairs
	// 0..3 of the qh dword at 128+32h+4l, four dwords l = 4c.. at a time
	// (chunk4: 16 bytes of each row, transposed).
	for h := 0; h < 2; h++ {
		for c := 0; c < 2; c++ {
			chunk4(64*h+16*c, 10)
			chunk4(64*h+32+16*c, 14)
			chunk4(128+32*h+16*c, 18)
			for m := 0; m < 4; m++ {
				l := 4*c + m
				A, B, H := fmt.Sprintf("Z%d", 10+m), fmt.Sprintf("Z%d", 14+m), fmt.Sprintf("Z%d", 18+m)
				v := 64 * (32*h + l)
				for i, c := range []struct {
					src   string
					shift int  // qh bit pair to bits 4, 5: left 4, 2, 0, right 2
					hi    bool // high nibble
				}{{A, 4, false}, {B, 2, false}, {A, 0, true}, {B, -2, true}} {
					q := fmt.Sprintf("Z%d", i)
					if c.hi {
						p("VPSRLD $4, %s, %s", c.src, q)
						p("VPANDD Z30, %s, %s", q, q)
					} else {
						p("VPANDD Z30, %s, %s", c.src, q)
					}
					hb := fmt.Sprintf("Z%d", 4+i)
					switch {
					case c.shift > 0:
						p("VPSLLD $%d, %s, %s", c.shift, H, hb)
						p("VPANDD.BCST q4k30<>(SB), %s, %s", hb, hb)
					case c.shift == 0:
						p("VPANDD.BCST q4k30<>(SB), %s, %s", H, hb)
					default:
						p("VPSRLD $%d, %s, %s", -c.shift, H, hb)
						p("VPANDD.BCST q4k30<>(SB), %s, %s", hb, hb)
					}
					p("VPORD %s, %s, %s", hb, q, q)
					p("VMOVDQU64 %s, %d(DI)", q, v+64*8*i)
				}
			}
		}
	}
	packEpilogue("q6kp", 210, 5696)
}

func main() {
	out.WriteString(`// Code generated by gengemmk512.go; DO NOT EDIT.

// AVX-512 VNNI packed K-quant kernels (gemmk512_amd64.go describes them).

#include "textflag.h"
`)
	kernel(kind{"gemmKernelQ4KAVX512", 5248, q4k})
	kernel(kind{"gemmKernelQ6KAVX512", 5696, q6k})
	kernel(kind{"gemmKernelQ2KAVX512", 5760, q2k})
	packQ4K(false)
	packQ4K(true)
	packQ6K()
	packQ3K()
	packQ2K()
	if err := os.WriteFile("gemmk512_amd64.s", out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
