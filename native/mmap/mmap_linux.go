package mmap

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapAligned maps the file at a 2 MiB-aligned address and asks for huge
// pages. File offset 0 then sits on a PMD boundary, so the kernel can map
// large page-cache folios of the file with one TLB entry per 2 MiB
// instead of 512: the kernels stream every weight byte per token, and 4 KiB
// translations of a multi-GiB mapping cost measurable time. Where the
// kernel or filesystem cannot do that the hint is a no-op. region is the
// whole reservation, which Close unmaps.
func mapAligned(f *os.File, size int) (data, region []byte, err error) {
	if size < hugeAlign {
		d, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
		return d, d, err
	}
	res, err := unix.Mmap(-1, 0, size+hugeAlign, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, fmt.Errorf("reserve address space: %w", err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(res)))
	aligned := (base + hugeAlign - 1) &^ (hugeAlign - 1)
	addr, _, errno := unix.Syscall6(unix.SYS_MMAP, aligned, uintptr(size), unix.PROT_READ,
		unix.MAP_SHARED|unix.MAP_FIXED, f.Fd(), 0)
	if errno != 0 || addr != aligned {
		_ = unix.Munmap(res)
		return nil, nil, fmt.Errorf("map file at %#x: %v", aligned, errno)
	}
	// The file now backs res[off : off+size]; the rest of res stays a
	// PROT_NONE reservation until Close.
	off := int(aligned - base)
	data = res[off : off+size : off+size]
	_ = unix.Madvise(data, unix.MADV_HUGEPAGE)
	return data, res, nil
}

func unmap(region []byte) error { return unix.Munmap(region) }

// advise applies a to the page-aligned file range [lo, hi) of the mapping.
func (m *Map) advise(lo, hi int64, a Advice) error {
	var adv int
	switch a {
	case Normal:
		adv = unix.MADV_NORMAL
	case Sequential:
		adv = unix.MADV_SEQUENTIAL
	case Random:
		adv = unix.MADV_RANDOM
	case WillNeed:
		adv = unix.MADV_WILLNEED
	case DontNeed:
		adv = unix.MADV_DONTNEED
	case Populate:
		adv = unix.MADV_POPULATE_READ
	}
	return unix.Madvise(m.data[lo:hi], adv)
}
