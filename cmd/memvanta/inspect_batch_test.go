package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rawGGUF is a GGUF v3 header with no tensors and the given encoded pairs.
func rawGGUF(kvs ...[]byte) []byte {
	b := append([]byte("GGUF"), 3, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = append(b, kv...)
	}
	return b
}

func rawString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// batchDir lays out a scan: good files (valid, malformed) and hostile ones
// (over the memory cap, a 2 MiB key, terminal escapes, a FIFO), some in a
// subdirectory. It returns the directory and the good files' paths.
func batchDir(t *testing.T) (string, []string) {
	dir := t.TempDir()
	valid, err := os.ReadFile("../../testdata/gguf/valid/base.gguf")
	if err != nil {
		t.Fatal(err)
	}
	good := []string{filepath.Join(dir, "a-valid.gguf"), filepath.Join(dir, "sub", "c-valid.gguf")}
	writeFile(t, good[0], valid)
	writeFile(t, good[1], valid)
	for _, name := range []string{"bad-magic", "alignment-zero", "overlap", "trunc-mid-key"} {
		b, err := os.ReadFile("../../testdata/gguf/malformed/" + name + ".gguf")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "m-"+name+".gguf")
		writeFile(t, p, b)
		good = append(good, p)
	}
	// 1M empty nested arrays: 12 MB of file, ~24 MB of values: over a
	// 16 MiB cap.
	big := rawString(nil, "x")
	big = binary.LittleEndian.AppendUint32(big, 9)
	big = binary.LittleEndian.AppendUint32(big, 9)
	big = binary.LittleEndian.AppendUint64(big, 1<<20)
	for range 1 << 20 {
		big = binary.LittleEndian.AppendUint32(big, 0)
		big = binary.LittleEndian.AppendUint64(big, 0)
	}
	writeFile(t, filepath.Join(dir, "b-oom.gguf"), rawGGUF(big))
	longKey := rawString(nil, strings.Repeat("K", 2<<20))
	writeFile(t, filepath.Join(dir, "sub", "b-longkey.gguf"), rawGGUF(binary.LittleEndian.AppendUint32(longKey, 99)))
	esc := rawString(nil, "general.architecture")
	esc = rawString(binary.LittleEndian.AppendUint32(esc, 8), "\x1b]0;pwned\x07\x1b[2J")
	writeFile(t, filepath.Join(dir, "b-escape.gguf"), rawGGUF(esc))
	mkfifo(t, filepath.Join(dir, "sub", "b-fifo.gguf"))
	return dir, good
}

type lineJSON struct {
	Schema  string          `json:"schema"`
	Index   *int            `json:"index"`
	File    string          `json:"file"`
	Verdict string          `json:"verdict"`
	Report  json.RawMessage `json:"report"`
	Error   json.RawMessage `json:"error"`
	Summary *batchSummary   `json:"summary"`
}

func runBatch(t *testing.T, args ...string) (map[string]lineJSON, *batchSummary, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runInspect(context.Background(), append([]string{"--json", "--mem-limit", "16MiB"}, args...), &stdout, &stderr)
	lines := map[string]lineJSON{}
	var sum *batchSummary
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var lj lineJSON
		if err := json.Unmarshal([]byte(l), &lj); err != nil {
			t.Fatalf("line %q: %v (stderr %s)", l, err, stderr.String())
		}
		if lj.Schema != BatchSchema {
			t.Fatalf("schema %q", lj.Schema)
		}
		if lj.Summary != nil {
			sum = lj.Summary
			continue
		}
		lines[lj.File] = lj
	}
	if sum == nil {
		t.Fatalf("no summary line; stderr %s", stderr.String())
	}
	return lines, sum, code
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return c.String()
}

// TestInspectBatch: a directory scan gives one line per regular file with
// the verdict and exactly the report (or error) a single-file inspect
// gives; the hostile files get their own verdicts, and the good files'
// lines are the same with or without them, in any order and parallelism.
func TestInspectBatch(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, good := batchDir(t)
	lines, sum, code := runBatch(t, "-j", "2", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 (some files are not ok)", code)
	}
	want := batchSummary{Files: 9, OK: 3, Malformed: 5, Limit: 1, Unreadable: 0}
	got := *sum
	got.Seconds, got.FilesPerSec = 0, 0
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	verdicts := map[string]string{
		"b-oom.gguf": verdictLimit, "b-longkey.gguf": verdictMalformed, "b-escape.gguf": verdictOK,
	}
	var idx []int
	for file, l := range lines {
		idx = append(idx, *l.Index)
		if v, ok := verdicts[filepath.Base(file)]; ok && l.Verdict != v {
			t.Errorf("%s: verdict %s, want %s (%s)", file, l.Verdict, v, l.Error)
		}
	}
	sort.Ints(idx)
	for i, x := range idx {
		if i != x {
			t.Fatalf("indexes %v, want 0..%d", idx, len(idx)-1)
		}
	}
	if len(lines) != 9 {
		t.Errorf("%d file lines (the FIFO is not a regular file and is not listed): %v", len(lines), lines)
	}
	// Each good file's line is what inspect gives for it alone.
	for _, p := range good {
		l, ok := lines[p]
		if !ok {
			t.Fatalf("no line for %s", p)
		}
		var out, errb bytes.Buffer
		code := runInspect(context.Background(), []string{"--json", "--mem-limit", "16MiB", p}, &out, &errb)
		switch {
		case code == 0 && l.Verdict == verdictOK:
			if compact(t, out.Bytes()) != string(l.Report) {
				t.Errorf("%s: batch report differs from a single inspect", p)
			}
		case code == 1 && l.Verdict == verdictMalformed:
			var doc struct{ Error json.RawMessage }
			if err := json.Unmarshal(errb.Bytes(), &doc); err != nil || compact(t, doc.Error) != string(l.Error) {
				t.Errorf("%s: batch error %s, single inspect %s", p, l.Error, errb.String())
			}
		default:
			t.Errorf("%s: single inspect exit %d, batch verdict %s", p, code, l.Verdict)
		}
	}
	// The good files alone, one at a time and in reverse order: the same
	// lines but for the index.
	rev := append([]string(nil), good...)
	sort.Sort(sort.Reverse(sort.StringSlice(rev)))
	alone, _, _ := runBatch(t, append([]string{"-j", "1"}, rev...)...)
	for _, p := range good {
		a, b := alone[p], lines[p]
		a.Index, b.Index = nil, nil
		ab, _ := json.Marshal(a)
		bb, _ := json.Marshal(b)
		if !bytes.Equal(ab, bb) {
			t.Errorf("%s: line with hostile neighbours\n %s\nalone\n %s", p, bb, ab)
		}
	}
	// Text mode: one line per file plus the summary, escapes escaped.
	var out, errb bytes.Buffer
	runInspect(context.Background(), []string{"--mem-limit", "16MiB", dir}, &out, &errb)
	if n := strings.Count(out.String(), "\n"); n != 10 {
		t.Errorf("text batch: %d lines, want 10:\n%s", n, out.String())
	}
	if strings.ContainsRune(out.String(), 0x1b) {
		t.Errorf("text batch leaks ESC:\n%q", out.String())
	}
}
