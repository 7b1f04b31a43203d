package kvec

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memvanta/memvanta/core/ggml"
)

func TestCasesRoundTrip(t *testing.T) {
	nan := math.Float32frombits(0x7fc00123) // payload must survive
	cs := []Case{
		{Op: OpDot, Type: ggml.Q4_K, Ints: []int64{-1, 1 << 40}, Floats: []float32{1.5, nan}, Blobs: [][]byte{{1, 2, 3}, {}}},
		{Op: OpSoftmax},
	}
	got, err := DecodeCases(EncodeCases(cs))
	if err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(got[0].Floats[1]) != 0x7fc00123 {
		t.Errorf("NaN payload lost: %#x", math.Float32bits(got[0].Floats[1]))
	}
	got[0].Floats[1], cs[0].Floats[1] = 0, 0
	if d := cmp.Diff(cs, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	rs := []Result{{Err: "boom"}, {Blobs: [][]byte{F32Bytes([]float32{1, -2})}}}
	back, err := DecodeResults(EncodeResults(rs))
	if err != nil || back[0].Err != "boom" || string(back[1].Blobs[0]) != string(rs[1].Blobs[0]) {
		t.Errorf("results round trip: %+v, %v", back, err)
	}
}

// Every truncation of a valid frame, and frames claiming huge counts, fail
// with an error instead of panicking or allocating.
func TestDecodeRejectsBadFrames(t *testing.T) {
	frame := EncodeCases([]Case{{Op: OpAdd, Ints: []int64{3}, Floats: []float32{2}, Blobs: [][]byte{{1, 2}, {3}}}})
	for n := 0; n < len(frame); n++ {
		if _, err := DecodeCases(frame[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := DecodeCases(append(frame, 0)); err == nil {
		t.Error("trailing byte: no error")
	}
	for _, b := range [][]byte{
		{0xff, 0xff, 0xff, 0xff},                            // 4G cases in 4 bytes
		{1, 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}, // 2G ints
	} {
		if _, err := DecodeCases(b); err == nil {
			t.Errorf("%x: no error", b)
		}
	}
	if _, err := DecodeResults([]byte{0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("results claiming 4G entries: no error")
	}
	if _, err := BytesF32([]byte{1, 2, 3}); err == nil {
		t.Error("3-byte f32 vector: no error")
	}
}
