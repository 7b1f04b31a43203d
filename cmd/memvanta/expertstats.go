package main

import (
	"fmt"

	"github.com/memvanta/memvanta/native/weights"
)

// expertStats is the mixture-of-experts part of a statistics line (empty
// for a model without experts): the cache's hit rate (acquisitions whose
// expert was cached before its batch asked for it), the expert bytes read
// per forward pass (one pass per generated token; a prefill batch is one
// pass too), and the time the graph waited for experts.
func expertStats(st weights.Stats) string {
	if st.ExpertAcquisitions == 0 {
		return ""
	}
	perPass := 0.0
	if st.Passes > 0 {
		perPass = float64(st.ExpertBytesRead) / float64(st.Passes)
	}
	s := fmt.Sprintf(" | experts %d acquired, hit %.1f%%, read %.1f MiB/pass, stall %.2f s",
		st.ExpertAcquisitions, 100*float64(st.ExpertHits)/float64(st.ExpertAcquisitions), mib(int64(perPass)), st.ExpertStallTime.Seconds())
	if st.ExpertPolicy != "" {
		s += " (" + st.ExpertPolicy + ")"
	}
	return s
}
