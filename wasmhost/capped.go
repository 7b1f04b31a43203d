package wasmhost

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// cappedWriter passes writes through to w until limit bytes have been
// written, then fails every further write (the guest sees EIO) and remembers
// that the cap was hit, so the host reports ErrOutputLimit whatever the guest
// does next. A write that would cross the cap is refused whole: the
// destination never receives more than limit bytes.
type cappedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	limit   int64
	n       int64
	name    string // "stdout" or "stderr", for the error text
	tripped bool
	closed  bool  // the run was abandoned: drop everything
	werr    error // first error from w itself
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errAbandoned
	}
	if c.tripped {
		return 0, c.capErr()
	}
	if int64(len(p)) > c.limit-c.n {
		c.tripped = true
		return 0, c.capErr()
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.werr == nil {
		c.werr = err
	}
	return n, err
}

func (c *cappedWriter) capErr() error {
	return fmt.Errorf("guest %s exceeds %d bytes: %w", c.name, c.limit, ErrOutputLimit)
}

var errAbandoned = errors.New("sandbox run abandoned")

// close makes every later write fail, so an abandoned guest can no longer
// reach the caller's writer.
func (c *cappedWriter) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// snapshot copies what was written so far when w is a *bytes.Buffer.
func (c *cappedWriter) snapshot() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.w.(*bytes.Buffer); ok {
		return bytes.Clone(b.Bytes())
	}
	return nil
}

func (c *cappedWriter) state() (tripped bool, werr error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripped, c.werr
}
