package gguf

// Limits bound what Parse will believe from a file before it allocates.
// Every count read from the file is checked against these and against the
// bytes left in the file, so a tiny file cannot make Parse allocate much.
// A zero field means "use the default".
type Limits struct {
	MaxStringLen   uint64 // bytes in one string (key, value or tensor name)
	MaxArrayLen    uint64 // elements in one metadata array
	MaxKV          uint64 // metadata key/value pairs
	MaxTensors     uint64 // tensor infos
	MaxDepth       int    // nesting depth of arrays of arrays (1 = flat array)
	MaxHeaderBytes int64  // bytes of header + metadata + tensor table
}

// DefaultLimits is generous enough for every real model (256k-token vocabs
// with merges, chat templates of tens of KiB, 100k tensors) yet keeps a
// hostile header from claiming gigabytes.
func DefaultLimits() Limits {
	return Limits{
		MaxStringLen:   16 << 20,
		MaxArrayLen:    16 << 20,
		MaxKV:          1 << 16,
		MaxTensors:     1 << 20,
		MaxDepth:       8,
		MaxHeaderBytes: 1 << 30,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxStringLen == 0 {
		l.MaxStringLen = d.MaxStringLen
	}
	if l.MaxArrayLen == 0 {
		l.MaxArrayLen = d.MaxArrayLen
	}
	if l.MaxKV == 0 {
		l.MaxKV = d.MaxKV
	}
	if l.MaxTensors == 0 {
		l.MaxTensors = d.MaxTensors
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}
