package wasmhost

import "errors"

// Cap errors. Every way the guest can exceed a sandbox limit ends in an error
// that wraps exactly one of these, so callers (and users) learn which cap was
// hit and which flag raises it.
var (
	// ErrMemoryLimit: the guest needed more linear memory than the cap.
	ErrMemoryLimit = errors.New("sandbox memory limit exceeded")
	// ErrTimeLimit: the guest ran past the wall-time cap.
	ErrTimeLimit = errors.New("sandbox time limit exceeded")
	// ErrOutputLimit: the guest wrote more to stdout or stderr than allowed.
	ErrOutputLimit = errors.New("sandbox output limit exceeded")
	// ErrGuestCrash: the guest died in a way that is none of the above (a
	// runtime fatal error or trap); it indicates a bug, not a bad file.
	ErrGuestCrash = errors.New("sandbox guest crashed")
)
