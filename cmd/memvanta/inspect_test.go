package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs `memvanta inspect args...` in-process.
func runInspectCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runInspect(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestInspectCLI shares one on-disk compile cache between its parts, so the
// guest is compiled once; every sandboxed invocation still starts a sandbox
// from that cache, as a real `memvanta inspect` does.
func TestInspectCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Run("sandbox matches native", testInspectCLISandboxMatchesNative)
	t.Run("errors", testInspectCLIErrors)
}

// The sandboxed and native paths give identical stdout, stderr and exit
// status, for valid files in every mode and for malformed files. The whole
// corpus is compared in the wasmhost tests; here a few files go through
// the CLI itself.
func testInspectCLISandboxMatchesNative(t *testing.T) {
	files := []string{"../../testdata/gguf/valid/base.gguf"}
	malformed, _ := filepath.Glob("../../testdata/gguf/malformed/*.gguf")
	if len(malformed) > 2 {
		malformed = malformed[:2]
	}
	files = append(files, malformed...)
	vocab, _ := filepath.Glob("../../../shared/vocab/ggml-vocab-llama-spm.gguf")
	files = append(files, vocab...)
	var sawError bool
	for _, f := range files {
		modes := [][]string{nil}
		if f == files[0] {
			modes = append(modes, []string{"--json"}, []string{"--tensors"})
		}
		for _, mode := range modes {
			args := append(append([]string(nil), mode...), f)
			nc, nout, nerr := runInspectCLI(t, append([]string{"--no-sandbox"}, args...)...)
			sc, sout, serr := runInspectCLI(t, args...)
			if nc != sc || nout != sout || nerr != serr {
				t.Errorf("%v: native (%d, %d bytes out, %q) != sandbox (%d, %d bytes out, %q)", args, nc, len(nout), nerr, sc, len(sout), serr)
			}
			switch nc {
			case 0:
				if nout == "" || nerr != "" {
					t.Errorf("%v: success with stdout %q, stderr %q", args, nout, nerr)
				}
			case 1:
				sawError = true
				if nout != "" || nerr == "" {
					t.Errorf("%v: failure must leave stdout empty and explain on stderr; got %q / %q", args, nout, nerr)
				}
			default:
				t.Errorf("%v: exit %d", args, nc)
			}
		}
	}
	if len(malformed) > 0 && !sawError {
		t.Error("no malformed file failed")
	}
}

func testInspectCLIErrors(t *testing.T) {
	base := "../../testdata/gguf/valid/base.gguf"
	tests := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{}, 2, "want a FILE"},
		{[]string{base, base}, 0, ""}, // a batch of two
		{[]string{"--tensors", base, base}, 2, "--tensors applies to one FILE"},
		{[]string{"-j", "0", base, base}, 2, "-j 0"},
		{[]string{"--mem-limit", "lots", base}, 2, "--mem-limit"},
		{[]string{"--mem-limit", "5GiB", base}, 2, "--mem-limit"},
		{[]string{"--timeout", "-1s", base}, 2, "--timeout"},
		{[]string{"--nope", base}, 2, "flag provided but not defined"},
		{[]string{"/nonexistent/x.gguf"}, 1, "no such file"},
		{[]string{"--no-sandbox", "/nonexistent/x.gguf"}, 1, "no such file"},
		// Caps: far too little memory for the guest to start, and no time.
		{[]string{"--mem-limit", "1MiB", base}, 1, "sandbox memory limit exceeded (raise it with --mem-limit)"},
		{[]string{"--timeout", "1ns", base}, 1, "sandbox time limit exceeded (raise it with --timeout)"},
		// Flags after the file name work too.
		{[]string{base, "--json", "--no-sandbox"}, 0, ""},
	}
	for _, tc := range tests {
		code, out, errs := runInspectCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.inStderr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.inStderr)
		}
		if code != 0 && out != "" {
			t.Errorf("%v: stdout %q on failure", tc.args, out)
		}
	}
}
