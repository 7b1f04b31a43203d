//go:build ignore

// gengemmq8i16 writes gemmq8i16_amd64.s: the AVX2 packed Q8_0 MatMul in
// the int16 layout of gemmq8i16_amd64.go (packer, activation prep and
// kernel). Run with go generate ./kernels/.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

const (
	blockB = 1088 // 16 pair vectors of 64 bytes + 16 f32 scales
	scaleO = 1024
	prepB  = 72 // 32 int16 + f32 d_a + 4 bytes of zero
	prepD  = 64
)

// tok is token t's prep address at byte offset off within the current
// block: DI + t·R9 (R10 = 3·R9, R11 = 5·R9).
func tok(t, off int) string {
	switch t {
	case 0:
		return fmt.Sprintf("%d(DI)", off)
	case 1:
		return fmt.Sprintf("%d(DI)(R9*1)", off)
	case 2:
		return fmt.Sprintf("%d(DI)(R9*2)", off)
	case 3:
		return fmt.Sprintf("%d(DI)(R10*1)", off)
	case 4:
		return fmt.Sprintf("%d(DI)(R9*4)", off)
	case 5:
		return fmt.Sprintf("%d(DI)(R11*1)", off)
	}
	panic("token")
}

func lo(t int) string { return fmt.Sprintf("Y%d", 2*t) }
func hi(t int) string { return fmt.Sprintf("Y%d", 2*t+1) }

// masks sets Y12, Y13 to the lane masks (rows 0..7, 8..15) of the row mask.
func masks() {
	p("VPBROADCASTD mask+72(FP), Y13")
	p("VPAND q8i16Bits<>+0(SB), Y13, Y12")
	p("VPCMPEQD q8i16Bits<>+0(SB), Y12, Y12")
	p("VPAND q8i16Bits<>+32(SB), Y13, Y13")
	p("VPCMPEQD q8i16Bits<>+32(SB), Y13, Y13")
}

// group writes the loop for T tokens at a time: R12 = token 0's prep, R14
// = its output row; the f32 sums live in the frame (token t at 64t(SP)).
func group(T int, next string) {
	l := fmt.Sprintf("g%d", T)
	label(l + "group")
	p("CMPQ AX, $%d", T)
	p("JLT %s", next)
	p("MOVQ first+80(FP), DX")
	p("TESTQ DX, DX")
	p("JNZ %szero", l)
	masks()
	p("MOVQ R14, R8")
	for t := 0; t < T; t++ {
		if t > 0 {
			p("ADDQ BX, R8")
		}
		p("VMASKMOVPS (R8), Y12, Y14")
		p("VMASKMOVPS 32(R8), Y13, Y15")
		p("VMOVUPS Y14, %d(SP)", 64*t)
		p("VMOVUPS Y15, %d(SP)", 64*t+32)
	}
	p("JMP %sstart", l)
	label(l + "zero")
	p("VXORPS Y14, Y14, Y14")
	for t := 0; t < T; t++ {
		p("VMOVUPS Y14, %d(SP)", 64*t)
		p("VMOVUPS Y14, %d(SP)", 64*t+32)
	}
	label(l + "start")
	p("MOVQ nblk+0(FP), CX")
	p("MOVQ pw+8(FP), SI")
	p("MOVQ R12, DI")
	label(l + "block")
	// 16 element pairs: the weights' pair vector once, every token's pair.
	for k := 0; k < 16; k++ {
		p("VMOVDQU %d(SI), Y12", 64*k)
		p("VMOVDQU %d(SI), Y13", 64*k+32)
		for t := 0; t < T; t++ {
			p("VPBROADCASTD %s, Y14", tok(t, 4*k))
			if k == 0 {
				p("VPMADDWD Y14, Y12, %s", lo(t))
				p("VPMADDWD Y14, Y13, %s", hi(t))
				continue
			}
			p("VPMADDWD Y14, Y12, Y15")
			p("VPADDD Y15, %s, %s", lo(t), lo(t))
			p("VPMADDWD Y14, Y13, Y14")
			p("VPADDD Y14, %s, %s", hi(t), hi(t))
		}
	}
	// f = fl(d_a·fl(d_w·float(s)) + f), gemmKernel's rounding.
	for t := 0; t < T; t++ {
		p("VCVTDQ2PS %s, %s", lo(t), lo(t))
		p("VCVTDQ2PS %s, %s", hi(t), hi(t))
		p("VMULPS %d(SI), %s, %s", scaleO, lo(t), lo(t))
		p("VMULPS %d(SI), %s, %s", scaleO+32, hi(t), hi(t))
		p("VBROADCASTSS %s, Y14", tok(t, prepD))
		p("VFMADD213PS %d(SP), Y14, %s", 64*t, lo(t))
		p("VFMADD213PS %d(SP), Y14, %s", 64*t+32, hi(t))
		p("VMOVUPS %s, %d(SP)", lo(t), 64*t)
		p("VMOVUPS %s, %d(SP)", hi(t), 64*t+32)
	}
	p("ADDQ $%d, SI", blockB)
	p("ADDQ $%d, DI", prepB)
	p("DECQ CX")
	p("JNZ %sblock", l)
	masks()
	for t := 0; t < T; t++ {
		p("VMOVUPS %d(SP), Y14", 64*t)
		p("VMOVUPS %d(SP), Y15", 64*t+32)
		p("VMASKMOVPS Y14, Y12, (R14)")
		p("VMASKMOVPS Y15, Y13, 32(R14)")
		p("ADDQ BX, R14")
	}
	switch T {
	case 6:
		p("LEAQ (R12)(R10*2), R12")
	case 4:
		p("LEAQ (R12)(R9*4), R12")
	case 2:
		p("LEAQ (R12)(R9*2), R12")
	case 1:
		p("ADDQ R9, R12")
	}
	p("SUBQ $%d, AX", T)
	p("JMP %sgroup", l)
}

func kernel() {
	fmt.Fprintf(&out, `
// func gemmKernelQ8I16AVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the int16 layout (a unused: the prep holds
// the activations, token t's blocks at prep + t·pstride). Per block and
// element pair k, the weights' pair vector (one dword per row) times each
// token's broadcast pair by VPMADDWD adds w_2k·a_2k + w_2k+1·a_2k+1 to the
// row's int32 lane: Σ w·a exactly for any bytes. Six tokens at a time (12
// int32 accumulators: each weight vector loaded once serves six tokens),
// then four, two, one; the f32 sums of the tokens in flight live in the
// frame, f = fl(d_a·fl(d_w·float(s)) + f) per block as gemmKernel rounds.
TEXT ·gemmKernelQ8I16AVX2(SB), NOSPLIT, $384-88
	MOVQ prep+32(FP), R12
	MOVQ pstride+40(FP), R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R9)(R9*4), R11
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
`)
	group(6, "g4group")
	group(4, "g2group")
	group(2, "g1group")
	group(1, "q8i16done")
	label("q8i16done")
	p("VZEROUPPER")
	p("RET")
}

func prep() {
	fmt.Fprintf(&out, `
// func gemmPrepQ8I16AVX2(nblk int, a *byte, dst *byte, stride int)
//
// For each of nblk consecutive Q8_0 activation blocks at a: its 32 quants
// as int16 at dst, its f32 scale at dst+%d, zero at dst+%d, then dst +=
// stride.
TEXT ·gemmPrepQ8I16AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ stride+24(FP), DX
	TESTQ CX, CX
	JZ q8prepdone
q8preploop:
	VPMOVSXBW 2(SI), Y0
	VPMOVSXBW 18(SI), Y1
	MOVWLZX (SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVQ X2, %d(DI)
	ADDQ $34, SI
	ADDQ DX, DI
	DECQ CX
	JNZ q8preploop
q8prepdone:
	VZEROUPPER
	RET
`, prepD, prepD+4, prepD)
}

func pack() {
	fmt.Fprintf(&out, `
// func gemmPackQ8I16AVX2(nblk int, w *byte, ws int, dst *byte)
//
// Packs blocks [0, nblk) of the 16 rows w, w+ws, ..., w+15·ws in the
// int16 layout: pair vector k (64 bytes at 64k) holds elements 2k, 2k+1 of
// row r as int16 at byte 4r; the 16 scales as f32 at %d. Four rows at a
// time (R10: the group's first row, R9: its lanes in dst).
TEXT ·gemmPackQ8I16AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R11
	TESTQ CX, CX
	JZ q8packdone
q8packblock:
	MOVQ SI, R10
	MOVQ DI, R9
	MOVQ $4, BX
q8packgroup:
	VPMOVSXBW 2(R10), Y0
	VPMOVSXBW 2(R10)(R8*1), Y1
	VPMOVSXBW 2(R10)(R8*2), Y2
	VPMOVSXBW 2(R10)(R11*1), Y3
	VPMOVSXBW 18(R10), Y4
	VPMOVSXBW 18(R10)(R8*1), Y5
	VPMOVSXBW 18(R10)(R8*2), Y6
	VPMOVSXBW 18(R10)(R11*1), Y7
	PAIRT4(Y0, Y1, Y2, Y3, X1, X2, X3, 0)
	PAIRT4(Y4, Y5, Y6, Y7, X5, X6, X7, 512)
	MOVWLZX (R10), AX
	VMOVD AX, X0
	VPINSRW $1, (R10)(R8*1), X0, X0
	VPINSRW $2, (R10)(R8*2), X0, X0
	VPINSRW $3, (R10)(R11*1), X0, X0
	VCVTPH2PS X0, X0
	VMOVDQU X0, %d(R9)
	LEAQ (R10)(R8*4), R10
	ADDQ $16, R9
	DECQ BX
	JNZ q8packgroup
	ADDQ $34, SI
	ADDQ $%d, DI
	DECQ CX
	JNZ q8packblock
q8packdone:
	VZEROUPPER
	RET
`, scaleO, scaleO, blockB)
}

func main() {
	out.WriteString(`// Code generated by gengemmq8i16.go; DO NOT EDIT.

#include "textflag.h"
#include "pairt4_amd64.h"

// q8i16Bits: dword lane r = 1<<r, to expand the row bitmask into lane masks.
DATA q8i16Bits<>+0(SB)/8, $0x0000000200000001
DATA q8i16Bits<>+8(SB)/8, $0x0000000800000004
DATA q8i16Bits<>+16(SB)/8, $0x0000002000000010
DATA q8i16Bits<>+24(SB)/8, $0x0000008000000040
DATA q8i16Bits<>+32(SB)/8, $0x0000020000000100
DATA q8i16Bits<>+40(SB)/8, $0x0000080000000400
DATA q8i16Bits<>+48(SB)/8, $0x0000200000001000
DATA q8i16Bits<>+56(SB)/8, $0x0000800000004000
GLOBL q8i16Bits<>(SB), RODATA|NOPTR, $64
`)
	kernel()
	prep()
	pack()
	if err := os.WriteFile("gemmq8i16_amd64.s", out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
