//go:build !amd64 && !arm64

package kernels

// archImpls: this architecture has only the portable scalar path.
func archImpls(scalar *Impl) []*Impl { return nil }
