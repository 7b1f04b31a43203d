package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/inspect"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// Differential test of the parser: native job.Inspect against the sandboxed
// guest on the vocab files in ../shared/vocab and the project's valid and
// malformed corpora. The report bytes must be identical (a JSON mismatch is
// shown as a go-cmp diff of the decoded documents) and a failure must have
// the same text, category, offset, key and tensor.

func corpusFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		"../../shared/vocab/*.gguf",
		"../testdata/gguf/valid/*.gguf",
		"../testdata/gguf/malformed/*.gguf",
	} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	sort.Strings(files)
	if raceEnabled {
		// The vocab files are the slow ones (hundreds of thousands of
		// strings); two of them still cover SPM and BPE tokenizers.
		var keep []string
		for _, f := range files {
			if !strings.Contains(f, "vocab") || strings.Contains(f, "llama-spm") || strings.Contains(f, "gpt-2") {
				keep = append(keep, f)
			}
		}
		files = keep
	}
	if len(files) == 0 {
		t.Skip("no GGUF corpus found (../shared/vocab, testdata/gguf)")
	}
	return files
}

var inspectModes = []job.InspectOptions{
	{JSON: true},
	{JSON: true, Full: true},
	{},
	{Tensors: true},
}

type outcome struct {
	out []byte
	err error
}

func nativeInspect(b []byte, o job.InspectOptions) outcome {
	var out bytes.Buffer
	err := job.Inspect(&out, bytes.NewReader(b), int64(len(b)), o)
	return outcome{out.Bytes(), err}
}

func sandboxInspect(ctx context.Context, h *Host, b []byte, o job.InspectOptions) outcome {
	var out bytes.Buffer
	err := h.InspectReaderAt(ctx, bytes.NewReader(b), int64(len(b)), o, &out)
	return outcome{out.Bytes(), err}
}

// sameOutcome returns "" if native and sandboxed runs agree, else why not.
func sameOutcome(native, wasm outcome, isJSON bool) string {
	if (native.err == nil) != (wasm.err == nil) {
		return "native error " + errString(native.err) + ", sandbox error " + errString(wasm.err)
	}
	if native.err != nil {
		if native.err.Error() != wasm.err.Error() {
			return "error text differs:\n native:  " + native.err.Error() + "\n sandbox: " + wasm.err.Error()
		}
		var re *job.RemoteError
		if !errors.As(wasm.err, &re) {
			return "sandbox error is not a guest report: " + wasm.err.Error()
		}
		var ng, wg *gguf.Error
		if errors.As(native.err, &ng) != errors.As(wasm.err, &wg) {
			return "one error is a *gguf.Error and the other is not"
		}
		if ng != nil && (ng.Category != wg.Category || ng.Offset != wg.Offset || ng.Key != wg.Key || ng.Tensor != wg.Tensor) {
			return "error fields differ: native " + string(inspect.ErrorJSON(native.err)) + " sandbox " + string(inspect.ErrorJSON(wasm.err))
		}
		if len(wasm.out) != 0 {
			return "sandbox wrote stdout on failure"
		}
		if !bytes.Equal(inspect.ErrorJSON(native.err), inspect.ErrorJSON(wasm.err)) {
			return "ErrorJSON differs"
		}
		return ""
	}
	if bytes.Equal(native.out, wasm.out) {
		return ""
	}
	if isJSON {
		var a, b any
		if json.Unmarshal(native.out, &a) == nil && json.Unmarshal(wasm.out, &b) == nil {
			return "JSON differs (-native +sandbox):\n" + cmp.Diff(a, b)
		}
	}
	return "output differs (-native +sandbox):\n" + cmp.Diff(strings.Split(string(native.out), "\n"), strings.Split(string(wasm.out), "\n"))
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestInspectNativeVsSandbox(t *testing.T) {
	files := corpusFiles(t)
	h := testHost(t, Config{Guest: GuestInspect})
	ctx := context.Background()
	var ok, failed int
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		modes := inspectModes
		if strings.Contains(path, "malformed") || raceEnabled || testing.Short() {
			modes = modes[:1] // parse errors do not depend on the report mode
		}
		for _, o := range modes {
			o.Name = name
			n := nativeInspect(b, o)
			w := sandboxInspect(ctx, h, b, o)
			if msg := sameOutcome(n, w, o.JSON); msg != "" {
				t.Errorf("%s %+v: %s", path, o, msg)
			}
			if n.err == nil {
				ok++
			} else {
				failed++
			}
		}
	}
	t.Logf("%d files: %d reports and %d errors identical", len(files), ok, failed)
	if strings.Contains(strings.Join(files, " "), "malformed") && failed == 0 {
		t.Error("the malformed corpus produced no errors")
	}
}

// sameOutcome must be able to fail.
func TestSameOutcomeDetectsDifferences(t *testing.T) {
	ge := &gguf.Error{Category: gguf.Truncated, Offset: 8, Err: errors.New("x")}
	ge2 := &gguf.Error{Category: gguf.Limit, Offset: 8, Err: errors.New("x")}
	re, _ := job.DecodeError(job.EncodeError(ge2))
	for _, tc := range []struct{ a, b outcome }{
		{outcome{out: []byte(`{"a":1}`)}, outcome{out: []byte(`{"a":2}`)}},
		{outcome{err: ge}, outcome{out: []byte("x")}},
		{outcome{err: ge}, outcome{err: re}},
	} {
		if sameOutcome(tc.a, tc.b, true) == "" {
			t.Errorf("%+v vs %+v reported equal", tc.a, tc.b)
		}
	}
}

// The reconstructed error equals the native one in text and fields, and
// errors.Is works on its category.
func TestDecodeErrorRoundTrip(t *testing.T) {
	for _, err := range []error{
		&gguf.Error{Category: gguf.Layout, Offset: 1234, Tensor: "blk.0.attn_q.weight", Err: errors.New("data past end")},
		&gguf.Error{Category: gguf.Invalid, Offset: 77, Key: "general.alignment", Err: errors.New("alignment 3 is not a power of two")},
		&gguf.Error{Category: gguf.Unsupported, Offset: 4},
		// Names from the file need not be UTF-8; JSON text would mangle them.
		&gguf.Error{Category: gguf.Layout, Offset: 392, Tensor: "\xbb.weight", Err: errors.New(`overlaps tensor "a.weight"`)},
		&gguf.Error{Category: gguf.Invalid, Offset: 9, Key: "k\x00\xff", Err: errors.New("x: y")},
		errors.New("read /model.gguf: input/output error"),
	} {
		re, derr := job.DecodeError(job.EncodeError(err))
		if derr != nil {
			t.Fatal(derr)
		}
		if re.Error() != err.Error() {
			t.Errorf("text %q, want %q", re.Error(), err.Error())
		}
		var ge *gguf.Error
		if errors.As(err, &ge) {
			sentinel := map[gguf.Category]error{gguf.Truncated: gguf.ErrTruncated, gguf.Limit: gguf.ErrLimit,
				gguf.Invalid: gguf.ErrInvalid, gguf.Layout: gguf.ErrLayout, gguf.Unsupported: gguf.ErrUnsupported}[ge.Category]
			if !errors.Is(re, sentinel) {
				t.Errorf("%v: errors.Is category sentinel is false", err)
			}
		}
		var rg *gguf.Error
		if errors.As(err, &ge) && (!errors.As(re, &rg) || rg.Key != ge.Key || rg.Tensor != ge.Tensor || rg.Offset != ge.Offset || rg.Category != ge.Category) {
			t.Errorf("fields of %v not reconstructed exactly: %+v", err, rg)
		}
		if !bytes.Equal(inspect.ErrorJSON(re), inspect.ErrorJSON(err)) {
			t.Errorf("ErrorJSON of the reconstruction differs:\n%s\n%s", inspect.ErrorJSON(re), inspect.ErrorJSON(err))
		}
	}
}
