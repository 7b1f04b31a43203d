package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/inspect"
	"github.com/memvanta/memvanta/wasmhost"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// BatchSchema names the JSON-lines format of a batch inspect.
//
// Every file gives one line, in the order the files finish:
//
//	{"schema":"memvanta.inspect.batch/v1","index":N,"file":PATH,"verdict":V, ...}
//
// index is the file's position in the sorted list of files scanned; file is
// the path as found. verdict is "ok" (then "report" holds the file's
// memvanta.inspect/v1 report, exactly what `inspect --json FILE` prints,
// compacted), "malformed" (a parse error: "error" holds the object
// `inspect --json FILE` prints under "error"), "limit" (the file made the
// sandbox hit a cap: memory, time or output; "error" says which and the flag
// that raises it) or "unreadable" (not a regular file, permission, I/O).
// The last line is the summary:
//
//	{"schema":"memvanta.inspect.batch/v1","summary":{"files":N,"ok":N,"malformed":N,"limit":N,"unreadable":N,"seconds":S,"files_per_second":R}}
const BatchSchema = "memvanta.inspect.batch/v1"

// batch inspects many files. Sandboxed (the default), all files share one
// compiled guest and each runs in a fresh module instance with its own
// memory and caps, so nothing one file does (exhaust its memory, run out
// its time, flood its output, crash the guest) reaches another's report.
type batch struct {
	json, full, native bool
	mem                int64
	timeout            time.Duration
	jobs               int
}

// batchLine is one output line; exactly one of Report and Error is set on a
// file line, Summary on the last.
type batchLine struct {
	Schema  string          `json:"schema"`
	Index   *int            `json:"index,omitempty"`
	File    string          `json:"file,omitempty"`
	Verdict string          `json:"verdict,omitempty"`
	Report  json.RawMessage `json:"report,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	Summary *batchSummary   `json:"summary,omitempty"`
}

type batchSummary struct {
	Files       int     `json:"files"`
	OK          int     `json:"ok"`
	Malformed   int     `json:"malformed"`
	Limit       int     `json:"limit"`
	Unreadable  int     `json:"unreadable"`
	Seconds     float64 `json:"seconds"`
	FilesPerSec float64 `json:"files_per_second"`
}

// Verdicts.
const (
	verdictOK         = "ok"
	verdictMalformed  = "malformed"
	verdictLimit      = "limit"
	verdictUnreadable = "unreadable"
)

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// batchFiles expands the arguments: a directory stands for every regular
// file under it (symbolic links inside are not followed), sorted; any other
// argument is taken as given (a missing or non-regular one is reported as
// unreadable on its own line).
func batchFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !isDir(a) {
			out = append(out, a)
			continue
		}
		var found []string
		err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func (b *batch) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	files, err := batchFiles(args)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta inspect: %v\n", err)
		return 1
	}
	start := time.Now()
	var h *wasmhost.Host
	if !b.native {
		if h, err = startSandbox(ctx, b.mem, b.timeout); err != nil {
			fmt.Fprintf(stderr, "memvanta inspect: %v%s\n", err, capHint(err))
			return 1
		}
		defer h.Close(ctx)
	}
	var (
		mu   sync.Mutex // orders whole lines on stdout and the counts
		sum  batchSummary
		next = make(chan int)
		wg   sync.WaitGroup
	)
	emit := func(i int, verdict string, line []byte) {
		mu.Lock()
		defer mu.Unlock()
		sum.Files++
		switch verdict {
		case verdictOK:
			sum.OK++
		case verdictMalformed:
			sum.Malformed++
		case verdictLimit:
			sum.Limit++
		default:
			sum.Unreadable++
		}
		stdout.Write(line)
	}
	for range min(b.jobs, max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			for i := range next {
				out.Reset()
				verdict, line := b.one(ctx, h, i, files[i], &out)
				emit(i, verdict, line)
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.FilesPerSec = float64(sum.Files) / sum.Seconds
	}
	if b.json {
		stdout.Write(marshalLine(batchLine{Schema: BatchSchema, Summary: &sum}))
	} else {
		fmt.Fprintf(stdout, "scanned %d files in %.2f s (%.1f files/s): %d ok, %d malformed, %d over a sandbox limit, %d unreadable\n",
			sum.Files, sum.Seconds, sum.FilesPerSec, sum.OK, sum.Malformed, sum.Limit, sum.Unreadable)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "memvanta inspect: interrupted after %d of %d files\n", sum.Files, len(files))
		return 130
	}
	if sum.OK != len(files) {
		return 1
	}
	return 0
}

// one inspects file i and returns its verdict and output line. out is the
// worker's report buffer.
func (b *batch) one(ctx context.Context, h *wasmhost.Host, i int, path string, out *bytes.Buffer) (string, []byte) {
	o := job.InspectOptions{JSON: true, Full: b.full, Name: filepath.Base(path)}
	err := func() error {
		f, size, err := openRegular(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if h == nil {
			return job.Inspect(out, f, size, o)
		}
		return h.InspectReaderAt(ctx, f, size, o, out)
	}()
	verdict := verdictOK
	var ge *gguf.Error
	switch {
	case err == nil:
	case errors.As(err, &ge):
		verdict = verdictMalformed
	case errors.Is(err, wasmhost.ErrMemoryLimit), errors.Is(err, wasmhost.ErrTimeLimit), errors.Is(err, wasmhost.ErrOutputLimit):
		verdict = verdictLimit
		err = fmt.Errorf("%w%s", err, capHint(err))
	default:
		verdict = verdictUnreadable
	}
	if !b.json {
		if err == nil {
			return verdict, []byte(fmt.Sprintf("%-10s %s%s\n", verdict, inspect.TerminalSafe(path), okSummary(out.Bytes())))
		}
		return verdict, []byte(fmt.Sprintf("%-10s %s: %s\n", verdict, inspect.TerminalSafe(path), inspect.TerminalSafe(err.Error())))
	}
	idx := i
	line := batchLine{Schema: BatchSchema, Index: &idx, File: path, Verdict: verdict}
	if err == nil {
		var c bytes.Buffer
		if cerr := json.Compact(&c, out.Bytes()); cerr != nil {
			// The guest's output is not trusted to be JSON.
			line.Verdict = verdictUnreadable
			line.Error = errorObject(fmt.Errorf("the report is not valid JSON: %v", cerr))
		} else {
			line.Report = c.Bytes()
		}
	} else {
		line.Error = errorObject(err)
	}
	return line.Verdict, marshalLine(line)
}

// marshalLine encodes one line as the single-file JSON is encoded (no HTML
// escaping, which json.Marshal would apply inside the embedded report), so
// a report reads byte for byte as `inspect --json FILE` prints it.
func marshalLine(l batchLine) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(l) // strings, numbers and valid raw JSON only
	return buf.Bytes()
}

// errorObject is the "error" member of inspect.ErrorJSON(err), compacted.
func errorObject(err error) json.RawMessage {
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(inspect.ErrorJSON(err), &doc) != nil {
		return nil
	}
	var c bytes.Buffer
	if json.Compact(&c, doc.Error) != nil {
		return nil
	}
	return c.Bytes()
}

// okSummary is the text-mode tail of an ok line: architecture, parameters,
// tensors, from the report.
func okSummary(report []byte) string {
	var r struct {
		Architecture string `json:"architecture"`
		Name         string `json:"name"`
		Parameters   uint64 `json:"parameters"`
		TensorCount  int    `json:"tensor_count"`
	}
	if json.Unmarshal(report, &r) != nil {
		return ""
	}
	arch := r.Architecture
	if arch == "" {
		arch = "(no architecture)"
	}
	return fmt.Sprintf(": %s, %d parameters, %d tensors", inspect.TerminalSafe(arch), r.Parameters, r.TensorCount)
}
