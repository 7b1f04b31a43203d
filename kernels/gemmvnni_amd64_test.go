package kernels

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// vnniRival pairs a type's avxvnni packed MatMul with the routines it must
// equal bit for bit (gemmvnni_amd64.go): avx2's for Q4_0, the K-quants and
// IQ4_XS, avx512's for Q8_0 (nil where this CPU lacks AVX-512: avx2's Q8_0
// kernels round differently, and TestMatMulPacked holds avxvnni's to the
// error bound).
func vnniRivals(t *testing.T) []struct {
	typ       ggml.Type
	ref, vnni *gemmRoutines
} {
	vnni, err := ByName("avxvnni")
	if err != nil {
		t.Skipf("avxvnni path: %v", err)
	}
	avx2, err := ByName("avx2")
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		typ       ggml.Type
		ref, vnni *gemmRoutines
	}
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.Q3_K, ggml.Q2_K, ggml.IQ4_XS} {
		ref := avx2.gemmFor(typ)
		if typ == ggml.Q8_0 {
			ref = nil
			if k, err := ByName("avx512"); err == nil {
				ref = k.gemmFor(typ)
			}
		}
		if ref == nil {
			continue
		}
		out = append(out, struct {
			typ       ggml.Type
			ref, vnni *gemmRoutines
		}{typ, ref, vnni.gemmFor(typ)})
	}
	return out
}

// TestGemmVNNIMatchesRef: every avxvnni packed MatMul output equals its
// rival's bit for bit (vnniRivals) — packer, prep and kernel together —
// for row counts around the 16-row tile (masked lanes), widths of 1 to 22
// super-blocks, batches through the kernels' token groups (6/3/2/1, the K-quants' 3/2/1), K-ranges
// of the type's kb, 3 and 1 blocks (later ranges continue from y: the
// kernels' not-first path), 1 and 2 threads (the prefetching kernel runs
// where a tile's next pack is a whole row), with the extreme scales and
// all −128/+127 activation blocks of gemmKWeights and gemmKActs. Each
// output starts as a different NaN payload and a guard follows the
// outputs, so a skipped or stray write fails too.
func TestGemmVNNIMatchesRef(t *testing.T) {
	r := rand.New(rand.NewPCG(731, 732))
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	const maxRows, maxNB = 33, 26
	nbList := []int{1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 26}
	colsList := []int{256, 768, 2048, 5632}
	if gemmRace {
		colsList = colsList[:3]
	}
	for _, c := range vnniRivals(t) {
		for _, cols := range colsList {
			var w, a []byte
			if c.typ.BlockSize() == 256 {
				w, a = gemmKWeights(r, c.typ, maxRows, cols), gemmKActs(r, c.typ, maxNB, cols)
			} else {
				w, a = gemmWeights(r, c.typ, maxRows, cols), gemmActs(r, c.typ, maxNB, cols)
			}
			ws, _ := RowSize(c.typ, cols)
			as, _ := RowSize(ActType(c.typ), cols)
			for _, rows := range []int{1, 5, 15, 16, 17, 33} {
				for _, nb := range nbList {
					for _, k := range []struct{ th, kb int }{{1, c.vnni.kb}, {2, c.vnni.kb}, {2, 3}, {1, 1}} {
						name := fmt.Sprintf("%s/%dx%d/nb%d/t%d/kb%d", c.typ, rows, cols, nb, k.th, k.kb)
						want := make([]float32, nb*rows+16)
						got := make([]float32, nb*rows+16)
						for i := range got {
							got[i] = math.Float32frombits(0x7fc00000 | uint32(i))
							want[i] = got[i]
						}
						matMulPacked(pools[k.th], c.ref, c.typ, rows, cols, w[:rows*ws], a[:nb*as], nb, want[:nb*rows], ws, as, k.kb)
						matMulPacked(pools[k.th], c.vnni, c.typ, rows, cols, w[:rows*ws], a[:nb*as], nb, got[:nb*rows], ws, as, k.kb)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: y[%d] (token %d, row %d) = %g (%#x), rival %g (%#x)", name, i, i/rows, i%rows,
									got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmVNNILanesPastRows calls each avxvnni kernel directly, not first,
// with a y stride wider than the tile and random starting values: the
// lanes past nr of every token must be left alone, and the updated ones
// must equal the rival's.
func TestGemmVNNILanesPastRows(t *testing.T) {
	r := rand.New(rand.NewPCG(733, 734))
	const n, ys = 3, 23
	for _, c := range vnniRivals(t) {
		bpb := 256 / c.typ.BlockSize() // blocks per 256 columns
		nb := n * bpb
		cols := n * 256
		var w []byte
		if bpb == 1 {
			w = gemmKWeights(r, c.typ, 16, cols)
		} else {
			w = gemmWeights(r, c.typ, 16, cols)
		}
		ws, _ := RowSize(c.typ, cols)
		as, _ := RowSize(ActType(c.typ), cols)
		for _, ntok := range []int{1, 2, 3, 4, 5, 6, 7, 11} {
			var a []byte
			if bpb == 1 {
				a = gemmKActs(r, c.typ, ntok, cols)
			} else {
				a = gemmActs(r, c.typ, ntok, cols)
			}
			for _, nr := range []int{1, 7, 9, 15, 16} {
				y0 := make([]float32, ntok*ys)
				for i := range y0 {
					y0[i] = float32(r.NormFloat64())
				}
				var res [2][]float32
				for i, g := range []*gemmRoutines{c.ref, c.vnni} {
					pw := make([]byte, nb*g.blockB)
					g.pack(nb, w, ws, pw)
					res[i] = append([]float32(nil), y0...)
					switch {
					case g.prep == nil:
						g.kernel(nb, pw, a, as, nil, 0, res[i], ys, ntok, nr, false)
					case g.prepByToken:
						prep := make([]byte, ntok*nb*g.prepB)
						for tk := 0; tk < ntok; tk++ {
							g.prep(nb, a[tk*as:], prep[tk*nb*g.prepB:], g.prepB)
						}
						g.kernel(nb, pw, nil, 0, prep, nb*g.prepB, res[i], ys, ntok, nr, false)
					default:
						prep := make([]byte, nb*ntok*g.prepB)
						for tk := 0; tk < ntok; tk++ {
							g.prep(nb, a[tk*as:], prep[tk*g.prepB:], ntok*g.prepB)
						}
						g.kernel(nb, pw, a, as, prep, ntok*g.prepB, res[i], ys, ntok, nr, false)
					}
				}
				for i := range y0 {
					lane := i % ys
					if lane >= nr && math.Float32bits(res[1][i]) != math.Float32bits(y0[i]) {
						t.Fatalf("%s ntok %d nr %d: lane %d of token %d changed", c.typ, ntok, nr, lane, i/ys)
					}
					if math.Float32bits(res[1][i]) != math.Float32bits(res[0][i]) {
						t.Fatalf("%s ntok %d nr %d: y[%d] = %g, rival %g", c.typ, ntok, nr, i, res[1][i], res[0][i])
					}
				}
			}
		}
	}
}

// TestPrepQ8KI8MatchesGo: the Go prep from bsums writes prepQ8KI8Go's bytes
// (which sums the quants) for QuantizeAct's blocks, including all-zero and
// extreme ones.
func TestPrepQ8KI8MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(735, 736))
	const n = 9
	a := gemmKActs(r, ggml.IQ4_XS, 1, n*256)
	got := make([]byte, n*gemmIQ4XS8PrepB)
	want := make([]byte, n*gemmIQ4XS8PrepB)
	prepQ8KI8(n, a, got, gemmIQ4XS8PrepB)
	for i := 0; i < n; i++ {
		prepQ8KI8Go(a[i*292:], want[i*gemmIQ4XS8PrepB:])
	}
	if !bytes.Equal(got, want) {
		t.Fatal("prepQ8KI8 differs from prepQ8KI8Go")
	}
}

// TestVNNIEncoding checks every VEX VPDPBUSD / VPDPWSSD that gengemmvnni.go
// wrote as BYTE directives into gemmvnni_amd64.s against GNU as's encoding
// of the instruction named in its comment ({vex} forces the AVX-VNNI form;
// AT&T operand order is Go's). It needs binutils (as, objcopy); without
// them it skips, and the MatMul tests still check what the bytes compute.
func TestVNNIEncoding(t *testing.T) {
	src, err := os.ReadFile("gemmvnni_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\t(BYTE \$0x[0-9a-f]{2}(?:; BYTE \$0x[0-9a-f]{2})*) // (VPDPBUSD|VPDPWSSD) Y(\d+), Y(\d+), Y(\d+) \(VEX\)$`)
	type inst struct {
		bytes []byte
		asm   string
	}
	seen := map[string]inst{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "VPDP") || strings.HasPrefix(line, "//") {
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("VPDP* line not in the checked BYTE form: %q", line)
		}
		var b []byte
		for _, f := range strings.Split(m[1], "; ") {
			v, err := strconv.ParseUint(strings.TrimPrefix(f, "BYTE $0x"), 16, 8)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, byte(v))
		}
		asm := fmt.Sprintf("{vex} %s %%ymm%s, %%ymm%s, %%ymm%s", strings.ToLower(m[2]), m[3], m[4], m[5])
		if prev, ok := seen[asm]; ok {
			if !bytes.Equal(prev.bytes, b) {
				t.Fatalf("%s written as % x and % x", asm, prev.bytes, b)
			}
			continue
		}
		seen[asm] = inst{b, asm}
		order = append(order, asm)
	}
	if len(order) == 0 {
		t.Fatal("no VPDPBUSD / VPDPWSSD found in gemmvnni_amd64.s")
	}
	as, err1 := exec.LookPath("as")
	objcopy, err2 := exec.LookPath("objcopy")
	if err1 != nil || err2 != nil {
		t.Skip("GNU as / objcopy not installed: encodings unchecked")
	}
	dir := t.TempDir()
	var text strings.Builder
	var want []byte
	for _, a := range order {
		text.WriteString(a + "\n")
		want = append(want, seen[a].bytes...)
	}
	s, o, bin := filepath.Join(dir, "v.s"), filepath.Join(dir, "v.o"), filepath.Join(dir, "v.bin")
	if err := os.WriteFile(s, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", o, s).CombinedOutput(); err != nil {
		t.Skipf("as cannot assemble AVX-VNNI (binutils < 2.36?): %v: %s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", o, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v: %s", err, out)
	}
	got, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		for i := 0; i < len(order) && 5*i+5 <= len(got); i++ {
			if !bytes.Equal(got[5*i:5*i+5], want[5*i:5*i+5]) {
				t.Errorf("%s: generated % x, GNU as % x", order[i], want[5*i:5*i+5], got[5*i:5*i+5])
			}
		}
		t.Fatalf("%d instructions: generated %d bytes, GNU as %d", len(order), len(want), len(got))
	}
	t.Logf("%d distinct VEX instructions match GNU as", len(order))
}

// TestAVXVNNISelection: the avxvnni path exists exactly where the CPU has
// AVX2 and AVX-VNNI, ranks first only without AVX-512, and asking for it
// elsewhere is refused with an error naming what is available.
func TestAVXVNNISelection(t *testing.T) {
	c := &cpuid.CPU
	has := c.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.AVXVNNI)
	k, err := ByName("avxvnni")
	if has != (err == nil) {
		t.Fatalf("CPU AVX-VNNI %v, ByName(avxvnni) error %v", has, err)
	}
	if !has {
		if !strings.Contains(err.Error(), "not supported on this CPU") {
			t.Fatalf("refusal does not say why: %v", err)
		}
		return
	}
	if k.Name != "avxvnni" {
		t.Fatalf("ByName(avxvnni) = %s", k.Name)
	}
	best := Available()[0].Name
	if _, err := ByName("avx512"); err == nil {
		if best != "avx512" {
			t.Fatalf("best path %s with AVX-512 present", best)
		}
	} else if best != "avxvnni" {
		t.Fatalf("best path %s, want avxvnni without AVX-512", best)
	}
}

// BenchmarkGemmVNNIAlt compares, on one thread, each type's avx2 packed
// MatMul with the avxvnni one (benchGemmPair: TinyLlama shapes,
// alternating calls, smallest CPU time of each; speedup = avx2/avxvnni).
func BenchmarkGemmVNNIAlt(b *testing.B) {
	vnni, err := ByName("avxvnni")
	if err != nil {
		b.Skipf("avxvnni path: %v", err)
	}
	avx2, _ := ByName("avx2")
	r := rand.New(rand.NewPCG(737, 738))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K, ggml.IQ4_XS} {
		b.Run(typ.String(), func(b *testing.B) {
			old, cur := avx2.gemmFor(typ).forBatch(512), vnni.gemmFor(typ)
			benchGemmPair(b, typ, r, []int{512}, gemmRival{"avx2", old, old.kb}, gemmRival{"avxvnni", cur, cur.kb})
		})
	}
}
