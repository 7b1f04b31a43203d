package model

import "fmt"

// Sequences: one Model (weights, worker pool and scratch) can serve several
// independent sequences, each with its own KV cache, by installing a
// sequence's cache before running it. A server keeps one cache per slot.

// NewKV makes an empty cache with the model's geometry and cache type,
// holding up to maxCtx positions (<= 0: the model's own context limit).
func (m *Model) NewKV(maxCtx int) (*KVCache, error) {
	if maxCtx <= 0 {
		maxCtx = m.kv.Cap()
	}
	s := m.kvSpec
	s.MaxCtx = maxCtx
	return NewKVCacheSpec(s)
}

// SwapKV installs kv as the cache Forward appends to and returns the one it
// replaces. kv must come from NewKV (or have the same geometry).
func (m *Model) SwapKV(kv *KVCache) (*KVCache, error) {
	old := m.kv
	if !m.sameGeometry(kv) {
		return nil, fmt.Errorf("model: SwapKV: cache geometry does not match the model")
	}
	m.kv = kv
	return old, nil
}
