package wasmhost

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/memvanta/memvanta/wasmhost/job"
)

// manyEmptyStrings is a valid GGUF v3 file whose one metadata key is an
// array of n empty strings: 8 bytes each in the file, but a 16-byte string
// header each once parsed (plus the report built from it), so a file of a
// few tens of MiB needs more guest memory than a small cap allows. Every
// count is honest, so the parser's limits accept it: only the sandbox caps
// stand between it and the host.
func manyEmptyStrings(n int) []byte {
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("GGUF")
	le(uint32(3))              // version
	le(uint64(0))              // tensors
	le(uint64(1))              // kv pairs
	le(uint64(3))              // key length
	b.WriteString("big")       // key
	le(uint32(9))              // array
	le(uint32(8))              // of string
	le(uint64(n))              // count
	b.Write(make([]byte, 8*n)) // n zero lengths
	return b.Bytes()
}

func TestHostileFileHitsCaps(t *testing.T) {
	big := manyEmptyStrings(4 << 20) // 32 MiB file, 64 MiB of string headers
	small := manyEmptyStrings(1000)
	tests := []struct {
		name string
		cfg  Config
		file []byte
		o    job.InspectOptions
		want error
	}{
		{"memory", Config{MemoryLimit: 48 << 20}, big, job.InspectOptions{JSON: true}, ErrMemoryLimit},
		{"time", Config{Timeout: 20 * time.Millisecond}, big, job.InspectOptions{VerifyOnly: true}, ErrTimeLimit},
		{"output", Config{StdoutLimit: 4096}, small, job.InspectOptions{JSON: true, Full: true}, ErrOutputLimit},
		{"strict time", Config{Timeout: 20 * time.Millisecond, StrictTermination: true}, big, job.InspectOptions{VerifyOnly: true}, ErrTimeLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The native parser accepts the file: it is the cap, not a
			// defect, that stops the sandbox.
			if !raceEnabled {
				if err := job.Inspect(io.Discard, bytes.NewReader(tc.file), int64(len(tc.file)), tc.o); err != nil {
					t.Fatalf("native: %v", err)
				}
			}
			tc.cfg.Guest = GuestInspect
			h := testHost(t, tc.cfg)
			var out bytes.Buffer
			err := h.InspectReaderAt(context.Background(), bytes.NewReader(tc.file), int64(len(tc.file)), tc.o, &out)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if int64(out.Len()) > h.Config().StdoutLimit {
				t.Fatalf("%d bytes reached stdout past the %d cap", out.Len(), h.Config().StdoutLimit)
			}
			if h.abandoned.Load() != 0 {
				t.Fatal("the guest had to be abandoned; the cap should have stopped it")
			}
		})
	}
}
