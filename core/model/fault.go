package model

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
)

// ErrWeightsFault is wrapped by the error Forward returns when reading the
// weights raised a memory fault: a mapped model file truncated (or cut
// short by being overwritten) while the model ran.
var ErrWeightsFault = errors.New("model: memory fault reading the weights")

// FaultExplainer is implemented by Weights whose bytes may fault (slices of
// a file mapping). FaultError turns the faulting address into an error
// that names the file and offset; it returns nil for an address it does
// not own.
type FaultExplainer interface {
	FaultError(addr uintptr, cause error) error
}

// recoverFault turns memory faults during a forward pass into errors.
// Forward starts with
//
//	defer m.recoverFault(debug.SetPanicOnFault(true), start, &err)
//
// which makes faults on its goroutine panics (the kernel pool's workers
// already run so, and re-raise theirs on this goroutine); recoverFault then
// restores the setting and recovers a fault panic into *err, leaving the
// sequence as it was before the call. Any other panic is re-raised. The
// cost is two runtime calls per Forward and no allocation.
func (m *Model) recoverFault(old bool, start int, err *error) {
	debug.SetPanicOnFault(old)
	m.faultToError(recover(), func() { m.kv.Truncate(start) }, err)
}

// recoverFaultFunc is recoverFault for ForwardBatch: undo restores every
// sequence it touched.
func (m *Model) recoverFaultFunc(old bool, undo func(), err *error) {
	debug.SetPanicOnFault(old)
	m.faultToError(recover(), undo, err)
}

// faultToError turns a recovered fault panic r into *err after undo; nil
// is ignored and any other panic is re-raised.
func (m *Model) faultToError(r any, undo func(), err *error) {
	if r == nil {
		return
	}
	re, isRuntime := r.(runtime.Error)
	fa, isFault := r.(interface{ Addr() uintptr })
	if !isRuntime || !isFault {
		panic(r)
	}
	undo()
	if fe, ok := m.w.(FaultExplainer); ok {
		if e := fe.FaultError(fa.Addr(), re); e != nil {
			*err = fmt.Errorf("%w: %w", ErrWeightsFault, e)
			return
		}
	}
	*err = fmt.Errorf("%w at address %#x: %v", ErrWeightsFault, fa.Addr(), re)
}
