package kernels

import "github.com/memvanta/memvanta/core/ggml"

// archDot pairs a weight type with its assembly routine.
type archDot struct {
	t ggml.Type
	f asmDot
}

// deriveImpl copies base and overrides the listed dot entries, so types
// without a routine on this path keep base's (ultimately scalar) one.
func deriveImpl(base *Impl, name string, dots []archDot) *Impl {
	k := base.clone(name)
	for _, d := range dots {
		k.setDot(d.t, wrapAsm(d.t, d.f))
		k.dot4[d.t] = nil // multi-row routines match base's dot, not this one
		k.dotRows4[d.t] = nil
	}
	return k
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
