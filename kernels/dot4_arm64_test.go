package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// TestNEONFourRowMatchesDot checks every listed NEON four-row routine
// against the one-row routine of the table it is listed for, bit for bit,
// independent of what the dispatch tables install (see
// checkFourRowRoutine). The SDOT lists run only on CPUs with ASIMDDP (under
// qemu: -cpu max or cortex-a76; -cpu cortex-a53 has none).
func TestNEONFourRowMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(311, 312))
	one := func(list []archRow, typ ggml.Type) DotFunc {
		for _, d := range list {
			if d.t == typ && d.dot != nil {
				return wrapAsm(typ, d.dot)
			}
		}
		return nil
	}
	type table struct {
		name         string
		dots         []archRow
		rows4, dot4s []archDot4
	}
	tables := []table{{"neon-v8.0", neonRows, neonRows4s, neonDot4s}}
	if cpuid.CPU.Supports(cpuid.ASIMDDP) {
		tables = append(tables, table{"neon-dotprod", neonDotprodRows, neonDotprodRows4s, neonDotprodDot4s})
		// The super-block types' integer sums are exact in every variant,
		// so their ARMv8.0 four-row routines match the SDOT one-row dot too.
		sdot := map[ggml.Type]bool{}
		for _, d := range neonDotprodRows {
			sdot[d.t] = d.t.BlockSize() == 256
		}
		var r4, d4 []archDot4
		for _, d := range neonRows4s {
			if sdot[d.t] {
				r4 = append(r4, d)
			}
		}
		for _, d := range neonDot4s {
			if sdot[d.t] {
				d4 = append(d4, d)
			}
		}
		tables = append(tables, table{"neon-v8.0 four-row vs SDOT dot", neonDotprodRows, r4, d4})
	} else {
		t.Log("no ASIMDDP: the SDOT lists are not checked")
	}
	for _, tb := range tables {
		for _, c := range []struct {
			kind fourRowKind
			list []archDot4
		}{{rows4Kind, tb.rows4}, {dot4Kind, tb.dot4s}} {
			for _, d := range c.list {
				dot := one(tb.dots, d.t)
				if dot == nil {
					t.Fatalf("%s %s %s: no one-row routine of that table to match", tb.name, c.kind.name, d.t)
				}
				var f fourRowFunc = wrapAsm4(d.t, d.f)
				if c.kind.stridedW {
					f = wrapAsmRows4(d.t, d.f)
				}
				t.Logf("%s %s %s", tb.name, c.kind.name, d.t)
				checkFourRowRoutine(t, r, c.kind, tb.name+" (direct)", d.t, f, dot)
			}
		}
	}
}
