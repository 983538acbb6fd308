//go:build unix

package safetensors

import (
	"errors"
	"syscall"
)

// processAlive says whether pid names a live process (signal 0 checks
// without signalling; EPERM means it lives under another user).
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}
