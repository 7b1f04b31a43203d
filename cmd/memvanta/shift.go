package main

import (
	"fmt"

	"github.com/memvanta/memvanta/core/engine"
)

// shiftFlags are context shift's options, spelled as llama.cpp's
// (common/arg.cpp): --context-shift (off by default, as in current
// llama.cpp), --no-context-shift, and --keep for generate and chat.
type shiftFlags struct {
	on, off bool
	keep    int
}

func (f *shiftFlags) register(c *cli, keep bool) {
	c.group("Context shift")
	if keep {
		c.boolVar(&f.on, "context-shift", "when the context fills during generation, keep the first --keep tokens, discard half of the rest and go on, re-rotating the cached keys (llama.cpp's context shift; default: stop at the context)")
	} else {
		c.boolVar(&f.on, "context-shift", "when a request's slot fills during generation, keep BOS, discard half of the rest and go on, re-rotating the cached keys (llama-server's context shift; default: end the request with finish_reason length)")
	}
	c.boolVar(&f.off, "no-context-shift", "stop at the context (the default; accepted for llama.cpp command lines)")
	if keep {
		c.intVar(&f.keep, "keep", "N", 0, "with --context-shift: prompt tokens to keep, after BOS (-1 = the whole prompt)")
	}
}

func (f *shiftFlags) validate() error {
	if f.keep < -1 {
		return fmt.Errorf("--keep %d: must be -1 (the whole prompt) or >= 0", f.keep)
	}
	return nil
}

// enabled reports whether context shift was asked for (the last of
// --context-shift and --no-context-shift does not matter: off wins).
func (f *shiftFlags) enabled() bool { return f.on && !f.off }

// apply sets r's context shift options.
func (f *shiftFlags) apply(r *engine.Request) {
	r.ContextShift, r.NKeep = f.enabled(), f.keep
}

// shiftLine is the statistics line's context shift part ("" when shift
// is off).
func shiftLine(on bool, st engine.Stats) string {
	if !on {
		return ""
	}
	s := fmt.Sprintf(" | context shifts %d", st.Shifts)
	if st.ShiftRecomputes > 0 {
		s += fmt.Sprintf(" (%d recomputed)", st.ShiftRecomputes)
	}
	return s
}
