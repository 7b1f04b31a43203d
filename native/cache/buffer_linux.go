package cache

import "golang.org/x/sys/unix"

// allocBuffer maps n bytes of anonymous memory (n is whole pages).
func allocBuffer(n int) ([]byte, error) {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, err
	}
	// Weight buffers are scanned end to end by the kernels: huge
	// pages (where the system allows them) cut TLB misses. Advisory.
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)
	return mem, nil
}

func freeBuffer(mem []byte) error { return unix.Munmap(mem) }
