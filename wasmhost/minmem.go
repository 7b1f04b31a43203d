package wasmhost

import (
	"errors"
	"fmt"
)

// guestMinPages reads the initial page count of the module's memory from
// its memory section (section 5: a vector of limits, flags then min), so a
// cap below it is refused with a clear message before anything else.
// Sections are skipped by their sizes; nothing is decoded beyond that.
func guestMinPages(wasm []byte) (uint32, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return 0, errors.New("not a wasm module")
	}
	b := wasm[8:]
	for len(b) > 0 {
		id := b[0]
		size, n := uleb(b[1:])
		if n == 0 || uint64(len(b)-1-n) < size {
			return 0, errors.New("malformed section header")
		}
		body := b[1+n : 1+n+int(size)]
		b = b[1+n+int(size):]
		if id != 5 {
			continue
		}
		count, n := uleb(body)
		if n == 0 || count == 0 || len(body) < n+2 {
			return 0, errors.New("empty memory section")
		}
		min, m := uleb(body[n+1:]) // after the limits flags byte
		if m == 0 || min > 65536 {
			return 0, errors.New("malformed memory limits")
		}
		return uint32(min), nil
	}
	return 0, errors.New("no memory section")
}

// uleb decodes an unsigned LEB128 number; n == 0 means malformed.
func uleb(b []byte) (v uint64, n int) {
	for shift := 0; n < len(b) && shift < 64; shift += 7 {
		c := b[n]
		n++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, n
		}
	}
	return 0, 0
}

// formatBytes is a size for messages: "1 B", "64.0 KiB", "2.75 MiB".
func formatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
