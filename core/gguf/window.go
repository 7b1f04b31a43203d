package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// windowSize is how much of the file one ReadAt fetches. A 150k-token vocab
// is millions of tiny fields; reading them through a window costs one
// ReadAt per 64 KiB instead of one per field, and keeps the bytes touched
// to the header plus at most one window.
const windowSize = 64 << 10

// window is a forward-only buffered cursor over an io.ReaderAt.
type window struct {
	r     io.ReaderAt
	size  int64 // file size
	max   int64 // header may not extend past this (Limits.MaxHeaderBytes)
	buf   []byte
	start int64 // file offset of buf[0]
	pos   int   // next unread index in buf
	end   int   // valid bytes in buf
	nread int64 // total bytes fetched from r
}

func newWindow(r io.ReaderAt, size, limit int64) *window {
	// Small files (and the corpus) need no full window.
	n := int64(windowSize)
	if size < n {
		n = max(size, 16)
	}
	return &window{r: r, size: size, max: limit, buf: make([]byte, n)}
}

func (w *window) offset() int64 { return w.start + int64(w.pos) }

// remaining is the bytes between the cursor and the end of the file.
func (w *window) remaining() int64 { return w.size - w.offset() }

// ioError marks a failure of the underlying reader, as opposed to a defect
// of the file, so it is not reported as a *Error category.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// need makes n bytes available at buf[pos:], or returns a *Error
// (Truncated / Limit) or an *ioError.
func (w *window) need(n int) error {
	if w.end-w.pos >= n {
		return nil
	}
	off := w.offset()
	if int64(n) > w.size-off {
		return &Error{Category: Truncated, Offset: off, Err: fmt.Errorf("need %d bytes, file has %d left (file size %d)", n, w.size-off, w.size)}
	}
	if int64(n) > w.max-off {
		return &Error{Category: Limit, Offset: off, Err: fmt.Errorf("header exceeds the %d-byte header limit", w.max)}
	}
	// Keep the unread tail (copied out of the old buffer when a long field
	// needs a bigger one), then fill up to the window (bounded by file end
	// and header limit). A buffer grown for one long string stays, but
	// later fills still read ahead at most one window or the field asked
	// for, so the bytes touched stay the header plus one window.
	buf := w.buf
	if n > len(buf) {
		buf = make([]byte, n)
	}
	k := copy(buf, w.buf[w.pos:w.end])
	w.buf = buf
	w.start = off
	w.pos = 0
	w.end = k
	want := int64(min(len(w.buf), max(n, windowSize)))
	if lim := min(w.size, w.max) - off; want > lim {
		want = lim
	}
	got, err := w.r.ReadAt(w.buf[k:want], off+int64(k))
	w.nread += int64(got)
	w.end += got
	if w.end < n {
		if err == nil || errors.Is(err, io.EOF) {
			return &Error{Category: Truncated, Offset: off + int64(w.end), Err: fmt.Errorf("reader returned end of data before declared size %d", w.size)}
		}
		return &ioError{fmt.Errorf("gguf: read at offset %d: %w", off+int64(k), err)}
	}
	return nil
}

// bytes returns the next n bytes; the slice is valid until the next call.
func (w *window) bytes(n int) ([]byte, error) {
	if err := w.need(n); err != nil {
		return nil, err
	}
	b := w.buf[w.pos : w.pos+n]
	w.pos += n
	return b, nil
}

func (w *window) u8() (uint8, error) {
	if err := w.need(1); err != nil {
		return 0, err
	}
	v := w.buf[w.pos]
	w.pos++
	return v, nil
}

func (w *window) u16() (uint16, error) {
	if err := w.need(2); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint16(w.buf[w.pos:])
	w.pos += 2
	return v, nil
}

func (w *window) u32() (uint32, error) {
	if err := w.need(4); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(w.buf[w.pos:])
	w.pos += 4
	return v, nil
}

func (w *window) u64() (uint64, error) {
	if err := w.need(8); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(w.buf[w.pos:])
	w.pos += 8
	return v, nil
}

func (w *window) f32() (float32, error) {
	v, err := w.u32()
	return math.Float32frombits(v), err
}

func (w *window) f64() (float64, error) {
	v, err := w.u64()
	return math.Float64frombits(v), err
}
