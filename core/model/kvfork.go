package model

import "fmt"

// CopyFrom makes c hold src's positions [0, n): the pages covering
// positions [from, n) are copied from src, and c keeps its own positions
// below from, which the caller knows to equal src's (the same tokens,
// computed by the same model). It is how a server forks a prefilled
// prompt into the other choices of one request (OpenAI's n) without
// computing the prompt again; each copy is real memory (pages are not
// shared), so Bytes counts it. c's positions from n on are forgotten.
func (c *KVCache) CopyFrom(src *KVCache, from, n int) error {
	if src == nil || src.nLayer != c.nLayer || src.kvDim != c.kvDim || src.headDim != c.headDim || src.typ != c.typ {
		return fmt.Errorf("model: KV copy: cache geometry does not match")
	}
	if n < 0 || n > src.n {
		return fmt.Errorf("model: KV copy: %d positions asked, the source holds %d", n, src.n)
	}
	from = max(0, min(from, c.n, n))
	if n == from {
		c.n = n
		return nil
	}
	if err := c.reserve(0, n); err != nil {
		return err
	}
	for l := 0; l < c.nLayer; l++ {
		for p := from / PageSize; p*PageSize < n; p++ {
			copy(c.k[l][p], src.k[l][p])
			copy(c.v[l][p], src.v[l][p])
		}
	}
	c.n = n
	return nil
}
