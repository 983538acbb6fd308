//go:build unix

package diffuse

import (
	"os"
	"syscall"
)

// mapFile maps f's size bytes read-only. The kernel pages the checkpoint
// in as tensors are read and may drop the pages again under memory
// pressure, so a streamed model's weights cost memory only while a block
// holds its copy.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
