package cuda

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// ErrNoDevice says this machine has no usable NVIDIA GPU: no driver library
// (libcuda.so.1), or a driver that finds no device. It is what a test may
// skip for; any other failure to open the backend is a real error. It is
// core.ErrNoDevice too, so conformance and the SDKs tell it from a fault.
var ErrNoDevice = fmt.Errorf("no CUDA device: %w", core.ErrNoDevice)

// ErrOutOfMemory marks a failed device allocation (errors.Is).
var ErrOutOfMemory = errors.New("out of CUDA device memory")
