package cuda

import "errors"

// ErrNoDevice says this machine has no usable NVIDIA GPU: no driver library
// (libcuda.so.1), or a driver that finds no device. It is what a test may
// skip for; any other failure to open the backend is a real error.
var ErrNoDevice = errors.New("no CUDA device")

// ErrOutOfMemory marks a failed device allocation (errors.Is).
var ErrOutOfMemory = errors.New("out of CUDA device memory")
