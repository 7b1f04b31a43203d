package weights

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ParseSize reads a byte size as given to --mem-budget: a plain number of
// bytes, or a number with a binary (KiB, MiB, GiB, TiB; also K, M, G, T)
// or decimal (KB, MB, GB, TB) suffix, case-insensitive. Fractions are
// allowed with a suffix ("1.5GiB"); the result is rounded down to a byte.
func ParseSize(s string) (int64, error) {
	in := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("size %q: empty", in)
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit such as 512MiB", in)
	}
	var mul uint64
	switch unit {
	case "", "b":
		mul = 1
	case "k", "ki", "kib":
		mul = 1 << 10
	case "m", "mi", "mib":
		mul = 1 << 20
	case "g", "gi", "gib":
		mul = 1 << 30
	case "t", "ti", "tib":
		mul = 1 << 40
	case "kb":
		mul = 1e3
	case "mb":
		mul = 1e6
	case "gb":
		mul = 1e9
	case "tb":
		mul = 1e12
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)", in, s[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: %w", in, err)
		}
		hi, lo := bits.Mul64(n, mul)
		if hi != 0 || lo > 1<<62 {
			return 0, fmt.Errorf("size %q: too large", in)
		}
		return int64(lo), nil
	}
	if unit == "" || unit == "b" {
		return 0, fmt.Errorf("size %q: fractional bytes", in)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", in, err)
	}
	v := f * float64(mul)
	if v > 1<<62 {
		return 0, fmt.Errorf("size %q: too large", in)
	}
	return int64(v), nil
}

// FormatSize renders n bytes in the largest binary unit that keeps it ≥ 1
// (two decimals), for messages and reports.
func FormatSize(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	v, u := float64(n)/1024, 0
	for u+1 < len(units) && (v >= 1024 || v <= -1024) {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + units[u]
}

// ceilMiB rounds n up to a whole MiB, the figure an error suggests as the
// smallest budget that works (so the suggestion parses and suffices).
func ceilMiB(n int64) int64 { return (n + (1<<20 - 1)) >> 20 }
