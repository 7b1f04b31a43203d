package model

import "fmt"

// CopyFrom makes c hold src's positions [0, n): the pages covering
// positions [from, n) are copied from src, and c keeps its own positions
// below from, which the caller knows to equal src's (the same tokens,
// computed by the same model). It is how a server forks a prefilled
// prompt into the other choices of one request (OpenAI's n) without
// computing the prompt again; each copy is real memory (pages are not
// shared), so Bytes counts it. c's positions from n on are forgotten.
// Sliding-window rings are copied whole; src must still hold the window
// before n.
func (c *KVCache) CopyFrom(src *KVCache, from, n int) error {
	if !c.sameLayout(src) {
		return fmt.Errorf("model: KV copy: cache geometry does not match")
	}
	if n < 0 || n > src.n {
		return fmt.Errorf("model: KV copy: %d positions asked, the source holds %d", n, src.n)
	}
	if src.ringCap > 0 && max(0, n+1-src.reach) < src.oldest {
		return fmt.Errorf("model: KV copy: the source's sliding-window rings no longer hold the window before position %d", n)
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
		p0 := from / PageSize
		if c.ringed(l) {
			p0 = 0
		}
		for p := p0; p < len(src.k.pages[l]) && p*PageSize < n; p++ {
			copy(c.k.pages[l][p], src.k.pages[l][p])
			copy(c.v.pages[l][p], src.v.pages[l][p])
		}
	}
	c.n, c.oldest = n, src.oldest
	return nil
}
