//go:build !(linux && cgo)

package cuda

import (
	"fmt"
	"runtime"

	"github.com/webtensor/webtensor/core"
)

// This build has no CUDA backend: it loads the driver through cgo's dlopen,
// which needs Linux and cgo. The device kind still exists so that asking
// for it says why it is missing.

var errUnsupported = fmt.Errorf("%w: the CUDA backend needs Linux and cgo; this build is %s/%s", ErrNoDevice, runtime.GOOS, runtime.GOARCH)

func init() {
	core.RegisterIndexedBackend("cuda", 20, func(int) (core.Backend, error) { return nil, errUnsupported })
}

// Backend is never made in this build.
type Backend struct{ core.Backend }

// Probe says why there is no CUDA device.
func Probe() (devices int, driverVersion int, err error) { return 0, 0, errUnsupported }

// Info is empty.
func (b *Backend) Info() Info { return Info{} }

// MemoryStats is empty.
func (b *Backend) MemoryStats() MemoryStats { return MemoryStats{} }

// MemoryInUse is 0: without cgo there is no CUDA memory.
func (b *Backend) MemoryInUse() int64 { return 0 }

// EmptyCache does nothing.
func (b *Backend) EmptyCache() error { return errUnsupported }

// SetAllowTF32 does nothing.
func (b *Backend) SetAllowTF32(bool) {}

// AllowTF32 is false.
func (b *Backend) AllowTF32() bool { return false }

// NewCompileOnly is unavailable.
func NewCompileOnly(int) (*Backend, error) { return nil, errUnsupported }

// NewEmulated is unavailable.
func NewEmulated() (*Backend, error) { return nil, errUnsupported }

// DeviceMemory is unavailable.
func (b *Backend) DeviceMemory() (free, total uint64, err error) { return 0, 0, errUnsupported }

// WrapDevicePointer is unavailable.
func (b *Backend) WrapDevicePointer(uint64, core.DType, int, func()) (core.Storage, error) {
	return nil, errUnsupported
}
