package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// rawFile assembles a GGUF v3 file by hand (not with Writer, which refuses
// duplicate keys): nKV pairs already encoded, no tensors.
func rawFile(nKV int, kvs ...[]byte) []byte {
	b := append([]byte(Magic), 3, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(nKV))
	for _, kv := range kvs {
		b = append(b, kv...)
	}
	return b
}

func rawStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

func rawStringKV(key, val string) []byte {
	b := rawStr(nil, key)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeString))
	return rawStr(b, val)
}

// TestLongStringsSurviveTheWindow: strings longer than the 64 KiB read
// window come back byte for byte (the window once grew into a fresh buffer
// and copied the unread bytes out of it, zeroing the first ~64 KiB), so a
// long key repeated is a duplicate.
func TestLongStringsSurviveTheWindow(t *testing.T) {
	for _, n := range []int{windowSize - 1, windowSize, windowSize + 1, 70000, 3 * windowSize} {
		name := strings.Repeat("N", n)
		// A short pair first, so the long value starts mid-window.
		data := rawFile(3, rawStringKV("general.architecture", "llama"), rawStringKV("general.name", name), rawStringKV("k", "v"))
		f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		got, err := f.String("general.name")
		if err != nil || got != name {
			t.Fatalf("%d-byte name: got %d bytes, %d of them 'N' (err %v)", n, len(got), strings.Count(got, "N"), err)
		}
		if v, _ := f.String("k"); v != "v" {
			t.Fatalf("%d: the pair after the long string reads %q", n, v)
		}
		key := strings.Repeat("k", n)
		dup := rawFile(3, rawStringKV("a", "b"), rawStringKV(key, "1"), rawStringKV(key, "2"))
		_, err = Parse(bytes.NewReader(dup), int64(len(dup)), DefaultLimits())
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate metadata key") {
			t.Fatalf("%d-byte key twice: %v, want a duplicate-key error", n, err)
		}
	}
}

// nestedArrayKV is one key whose value is an array of n arrays, each made by
// inner (the inner array's element type and encoded body).
func nestedArrayKV(key string, n int, elem ValueType, inner []byte) []byte {
	b := rawStr(nil, key)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	for range n {
		b = binary.LittleEndian.AppendUint32(b, uint32(elem))
		b = append(b, inner...)
	}
	return b
}

// amplificationFiles are shapes that maximise allocation per byte of file:
// nested arrays (each once allocated a fresh 64 KiB string arena), empty
// nested arrays, and many tiny strings and tensors.
func amplificationFiles() map[string][]byte {
	oneStr := rawStr(binary.LittleEndian.AppendUint64(nil, 1), "x")
	empty := binary.LittleEndian.AppendUint64(nil, 0)
	oneU8 := append(binary.LittleEndian.AppendUint64(nil, 1), 7)
	emptyStrings := func(n int) []byte {
		b := rawStr(nil, "strs")
		b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
		b = binary.LittleEndian.AppendUint32(b, uint32(TypeString))
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
		return append(b, make([]byte, 8*n)...)
	}
	tensors := func(n int) []byte {
		b := append([]byte(Magic), 3, 0, 0, 0)
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
		b = binary.LittleEndian.AppendUint64(b, 0)
		for i := range n {
			b = rawStr(b, string(rune('a'+i%26))+strings.Repeat("x", i/26%4)+string(binary.LittleEndian.AppendUint32(nil, uint32(i))))
			b = binary.LittleEndian.AppendUint32(b, 4)
			for range 4 {
				b = binary.LittleEndian.AppendUint64(b, 0)
			}
			b = binary.LittleEndian.AppendUint32(b, 0)
			b = binary.LittleEndian.AppendUint64(b, 0)
		}
		return append(b, make([]byte, 32)...)
	}
	return map[string][]byte{
		"100k nested one-string arrays": rawFile(1, nestedArrayKV("x", 100_000, TypeString, oneStr)),
		"300k nested one-string arrays": rawFile(1, nestedArrayKV("x", 300_000, TypeString, oneStr)),
		"1M empty nested arrays":        rawFile(1, nestedArrayKV("x", 1_000_000, TypeUint8, empty)),
		"1M one-byte nested arrays":     rawFile(1, nestedArrayKV("x", 1_000_000, TypeUint8, oneU8)),
		"1M empty strings":              rawFile(1, emptyStrings(1_000_000)),
		"200k zero-size tensors":        tensors(200_000),
	}
}

// maxAllocPerByte and allocSlack bound what Parse may allocate for a file:
// at most maxAllocPerByte times the bytes it read plus allocSlack (the
// read window, the metadata maps' base size). Derived from the worst
// shape: an empty nested array is 12 bytes of file and costs its 24-byte
// Value in the parent slice; a one-byte nested array (13 bytes) costs the
// Value plus its boxed slice header and the byte (56 bytes: 3.8x; 64 bytes,
// 4.9x, under -race, which turns off the allocator's packing of tiny
// objects).
const (
	maxAllocPerByte = 5
	allocSlack      = 1 << 20
)

// TestParseAllocationBounded: allocation stays within a small multiple of
// the bytes actually read, whatever the shape of the metadata.
func TestParseAllocationBounded(t *testing.T) {
	for name, data := range amplificationFiles() {
		runtime.GC()
		var m0, m1 runtimeMem
		m0.read()
		f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		m1.read()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		alloc := m1.total - m0.total
		t.Logf("%s: %d bytes read, %d allocated (%.2fx)", name, f.BytesRead, alloc, float64(alloc)/float64(f.BytesRead))
		if alloc > uint64(f.BytesRead)*maxAllocPerByte+allocSlack {
			t.Errorf("%s: allocated %d bytes for %d bytes read (bound %dx + %d)", name, alloc, f.BytesRead, maxAllocPerByte, allocSlack)
		}
	}
}

// TestErrorNamesAreCapped: a key or tensor name quoted in an error is cut
// to its first bytes plus its length, so a 2 MiB name cannot make a 2 MiB
// error line.
func TestErrorNamesAreCapped(t *testing.T) {
	long := strings.Repeat("K", 2<<20)
	// A long key with an invalid value type; a long tensor name with 0 dims.
	bad := rawStr(nil, long)
	bad = binary.LittleEndian.AppendUint32(bad, 99)
	tb := append([]byte(Magic), 3, 0, 0, 0)
	tb = binary.LittleEndian.AppendUint64(tb, 1)
	tb = binary.LittleEndian.AppendUint64(tb, 0)
	tb = rawStr(tb, long)
	tb = binary.LittleEndian.AppendUint32(tb, 0)
	for name, data := range map[string][]byte{"key": rawFile(1, bad), "tensor": tb} {
		_, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err == nil {
			t.Fatalf("%s: parsed", name)
		}
		msg := err.Error()
		if len(msg) > 1024 {
			t.Errorf("%s: error is %d bytes long", name, len(msg))
		}
		if !strings.Contains(msg, "2097152 bytes") {
			t.Errorf("%s: error does not give the name's length: %.300s", name, msg)
		}
		var e *Error
		if !errors.As(err, &e) || len(e.Key) > MaxQuotedName || len(e.Tensor) > MaxQuotedName || !strings.HasPrefix(e.Key+e.Tensor, "KKKK") {
			t.Errorf("%s: *Error names not capped to the name's head: key %d bytes, tensor %d bytes", name, len(e.Key), len(e.Tensor))
		}
	}
}
