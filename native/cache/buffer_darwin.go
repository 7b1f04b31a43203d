package cache

import "golang.org/x/sys/unix"

// allocBuffer maps n bytes of anonymous memory (n is whole pages). macOS
// has no transparent huge pages to ask for (buffer_linux.go).
func allocBuffer(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

func freeBuffer(mem []byte) error { return unix.Munmap(mem) }
