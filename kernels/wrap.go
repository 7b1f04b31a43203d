package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// Adapters from the assembly calling conventions (asmDot, asmDot4) to the
// slice-based function types of api.go, shared by every architecture's
// rows (derive). They are plain Go: the portable build compiles them too.

// wrapAsmRows4 is wrapAsm4 for the four-weight-row routines: the stride
// steps through w, and the last byte of the fourth weight row and of a are
// touched in Go.
func wrapAsmRows4(t ggml.Type, f asmDot4) DotRows4Func {
	bs := t.BlockSize()
	ws := t.TypeSize()
	as := ActType(t).TypeSize()
	return func(n int, w, a []byte, stride int, y *[4]float32) {
		nb := n / bs
		if nb <= 0 {
			*y = [4]float32{}
			return
		}
		if stride < nb*ws {
			panic(fmt.Sprintf("kernels: dotRows4 %s: stride %d shorter than the %d-byte weight row", t, stride, nb*ws))
		}
		_ = w[3*stride+nb*ws-1]
		_ = a[nb*as-1]
		f(nb, &w[0], &a[0], stride, y)
	}
}

// wrapAsm4 adapts a four-row assembly routine to Dot4Func, with the same
// bounds discipline as wrapAsm: the last byte of w and of the fourth
// activation row are touched in Go, and a stride shorter than a row (rows
// overlapping or running backwards) is a caller bug that panics here.
func wrapAsm4(t ggml.Type, f asmDot4) Dot4Func {
	bs := t.BlockSize()
	ws := t.TypeSize()
	as := ActType(t).TypeSize()
	return func(n int, w, a []byte, stride int, y *[4]float32) {
		nb := n / bs
		if nb <= 0 {
			*y = [4]float32{}
			return
		}
		if stride < nb*as {
			panic(fmt.Sprintf("kernels: dot4 %s: stride %d shorter than the %d-byte activation row", t, stride, nb*as))
		}
		_ = w[nb*ws-1]
		_ = a[3*stride+nb*as-1]
		f(nb, &w[0], &a[0], stride, y)
	}
}

// wrapAsm adapts an assembly routine to DotFunc. It converts n to blocks and
// touches the last byte of both rows so that a caller passing short slices
// gets a bounds panic in Go instead of an out-of-bounds read in assembly.
func wrapAsm(t ggml.Type, f asmDot) DotFunc {
	bs := t.BlockSize()
	ws := t.TypeSize()
	as := ActType(t).TypeSize()
	return func(n int, w, a []byte) float32 {
		nb := n / bs
		if nb <= 0 {
			return 0
		}
		_ = w[nb*ws-1]
		_ = a[nb*as-1]
		return f(nb, &w[0], &a[0])
	}
}
