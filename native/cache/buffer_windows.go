package cache

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// allocBuffer reserves and commits n bytes (whole pages) with VirtualAlloc,
// Windows' anonymous mapping: zeroed, outside the Go heap, and given
// physical pages only when touched, as mmap(MAP_ANON) elsewhere. Large
// pages need a privilege (SeLockMemoryPrivilege) ordinary users lack, so
// none are asked for.
func allocBuffer(n int) ([]byte, error) {
	addr, err := windows.VirtualAlloc(0, uintptr(n), windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READWRITE)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), addr)), n), nil
}

func freeBuffer(mem []byte) error {
	return windows.VirtualFree(uintptr(unsafe.Pointer(unsafe.SliceData(mem))), 0, windows.MEM_RELEASE)
}
