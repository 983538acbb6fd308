//go:build linux && cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// The Go side of loader.c: library loading and thin wrappers that turn
// CUresult, nvrtcResult and cublasStatus_t into errors.

type (
	cuContext  = C.CUcontext
	cuStream   = C.CUstream
	cuFunction = C.CUfunction
	cuEvent    = C.CUevent
)

const (
	libDriver   = C.WT_LIB_DRIVER
	libNVRTC    = C.WT_LIB_NVRTC
	libCublas   = C.WT_LIB_CUBLAS
	libCublasLt = C.WT_LIB_CUBLASLT
)

// loadLib tries candidates in order and returns the path that loaded, or
// an error listing every attempt.
func loadLib(lib int, what string, candidates []string) (string, error) {
	var missing, failed []string
	buf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(buf))
	for _, p := range candidates {
		cp := C.CString(p)
		rc := C.wt_cuda_load(C.int(lib), cp, buf, 1024)
		C.free(unsafe.Pointer(cp))
		if rc == 0 {
			return p, nil
		}
		// A file that is not there is expected; one that is there and
		// does not load (another architecture, a symbol missing) is news.
		if msg := C.GoString(buf); strings.Contains(msg, "No such file") {
			missing = append(missing, p)
		} else {
			failed = append(failed, msg)
		}
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("%s did not load: %s", what, strings.Join(failed, "; "))
	}
	return "", fmt.Errorf("%s is not installed (looked for %s)", what, strings.Join(missing, ", "))
}

// CUDA error codes the backend treats specially.
const (
	cuErrOutOfMemory   = 2
	cuErrNoDevice      = 100
	cuErrInvalidDevice = 101
	cuErrIllegalAddr   = 700
	cuErrLaunchFailed  = 719
)

// cuError is a failed driver call.
type cuError struct {
	call string
	code int
}

func (e *cuError) Error() string {
	r := C.CUresult(e.code)
	return fmt.Sprintf("cuda: %s: %s (%s)", e.call, C.GoString(C.wt_cuErrorString(r)), C.GoString(C.wt_cuErrorName(r)))
}

func (e *cuError) Is(target error) bool {
	return target == ErrOutOfMemory && e.code == cuErrOutOfMemory
}

// sticky reports whether the error leaves the context unusable: after an
// illegal address or a failed launch every later call fails too.
func (e *cuError) sticky() bool {
	return e.code == cuErrIllegalAddr || e.code == cuErrLaunchFailed || (e.code >= 700 && e.code <= 720)
}

func cuCheck(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &cuError{call: call, code: int(r)}
}

var driverOnce struct {
	sync.Once
	path    string
	version int
	err     error
}

// loadDriver loads libcuda and initialises it once per process.
func loadDriver() (path string, version int, err error) {
	driverOnce.Do(func() {
		p, err := loadLib(libDriver, "the NVIDIA driver library libcuda.so.1", driverCandidates())
		if err != nil {
			driverOnce.err = fmt.Errorf("%w: %v", ErrNoDevice, err)
			return
		}
		driverOnce.path = p
		if r := C.wt_cuInit(); r != 0 {
			e := &cuError{call: "cuInit", code: int(r)}
			if r == cuErrNoDevice || r == cuErrInvalidDevice {
				driverOnce.err = fmt.Errorf("%w: %v", ErrNoDevice, e)
			} else {
				driverOnce.err = e
			}
			return
		}
		var v C.int
		if err := cuCheck("cuDriverGetVersion", C.wt_cuDriverGetVersion(&v)); err != nil {
			driverOnce.err = err
			return
		}
		driverOnce.version = int(v)
	})
	return driverOnce.path, driverOnce.version, driverOnce.err
}

func deviceCount() (int, error) {
	var n C.int
	err := cuCheck("cuDeviceGetCount", C.wt_cuDeviceGetCount(&n))
	return int(n), err
}

// deviceProps are what the backend and doctor need to know of a GPU.
type deviceProps struct {
	name         string
	major, minor int
	sms          int
	totalMem     uint64
	maxSharedOpt int
	l2Bytes      int
}

func queryDevice(ordinal int) (C.CUdevice, deviceProps, error) {
	var d C.CUdevice
	var p deviceProps
	if err := cuCheck("cuDeviceGet", C.wt_cuDeviceGet(&d, C.int(ordinal))); err != nil {
		return d, p, err
	}
	name := (*C.char)(C.malloc(256))
	defer C.free(unsafe.Pointer(name))
	if err := cuCheck("cuDeviceGetName", C.wt_cuDeviceGetName(name, 256, d)); err != nil {
		return d, p, err
	}
	p.name = C.GoString(name)
	attr := func(a int) int {
		var v C.int
		if C.wt_cuDeviceGetAttribute(&v, C.int(a), d) != 0 {
			return 0
		}
		return int(v)
	}
	p.major, p.minor = attr(75), attr(76)
	p.sms, p.maxSharedOpt, p.l2Bytes = attr(16), attr(97), attr(38)
	var total C.size_t
	if err := cuCheck("cuDeviceTotalMem", C.wt_cuDeviceTotalMem(&total, d)); err != nil {
		return d, p, err
	}
	p.totalMem = uint64(total)
	return d, p, nil
}

func primaryContext(d C.CUdevice) (cuContext, error) {
	var c C.CUcontext
	err := cuCheck("cuDevicePrimaryCtxRetain", C.wt_cuDevicePrimaryCtxRetain(&c, d))
	return c, err
}

func memAlloc(ctx cuContext, bytes uint64) (devicePtr, error) {
	var p C.CUdeviceptr
	if err := cuCheck("cuMemAlloc", C.wt_cuMemAlloc(ctx, &p, C.size_t(bytes))); err != nil {
		return 0, err
	}
	return devicePtr(p), nil
}

func memFree(ctx cuContext, p devicePtr) error {
	return cuCheck("cuMemFree", C.wt_cuMemFree(ctx, C.CUdeviceptr(p)))
}

func memInfo(ctx cuContext) (free, total uint64, err error) {
	var f, t C.size_t
	err = cuCheck("cuMemGetInfo", C.wt_cuMemGetInfo(ctx, &f, &t))
	return uint64(f), uint64(t), err
}

// copyToDevice copies host bytes to dst in stream order. The host memory
// may be reused at once: a pageable source is staged by the driver before
// the call returns.
func copyToDevice(ctx cuContext, s cuStream, dst devicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return cuCheck("cuMemcpyHtoDAsync", C.wt_cuMemcpyHtoD(ctx, C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), s))
}

// copyToHost copies device bytes into dst and waits for the stream.
func copyToHost(ctx cuContext, s cuStream, dst []byte, src devicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return cuCheck("cuMemcpyDtoH", C.wt_cuMemcpyDtoH(ctx, unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst)), s))
}

func copyDevice(ctx cuContext, s cuStream, dst, src devicePtr, n uint64) error {
	if n == 0 {
		return nil
	}
	return cuCheck("cuMemcpyDtoDAsync", C.wt_cuMemcpyDtoD(ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s))
}

func memsetZero(ctx cuContext, s cuStream, dst devicePtr, n uint64) error {
	if n == 0 {
		return nil
	}
	return cuCheck("cuMemsetD8Async", C.wt_cuMemsetD8(ctx, C.CUdeviceptr(dst), 0, C.size_t(n), s))
}

func streamCreate(ctx cuContext) (cuStream, error) {
	var s C.CUstream
	err := cuCheck("cuStreamCreate", C.wt_cuStreamCreate(ctx, &s))
	return s, err
}

func streamSync(ctx cuContext, s cuStream) error {
	return cuCheck("cuStreamSynchronize", C.wt_cuStreamSynchronize(ctx, s))
}

func streamWaitEvent(ctx cuContext, s cuStream, e cuEvent) error {
	return cuCheck("cuStreamWaitEvent", C.wt_cuStreamWaitEvent(ctx, s, e))
}

// eventCreate makes an event; timing says whether it records time.
func eventCreate(ctx cuContext, timing bool) (cuEvent, error) {
	var e C.CUevent
	flags := C.uint(0)
	if !timing {
		flags = 2 // CU_EVENT_DISABLE_TIMING
	}
	err := cuCheck("cuEventCreate", C.wt_cuEventCreate(ctx, &e, flags))
	return e, err
}

func eventRecord(ctx cuContext, e cuEvent, s cuStream) error {
	return cuCheck("cuEventRecord", C.wt_cuEventRecord(ctx, e, s))
}

func eventSync(ctx cuContext, e cuEvent) error {
	return cuCheck("cuEventSynchronize", C.wt_cuEventSynchronize(ctx, e))
}

func eventElapsed(ctx cuContext, a, b cuEvent) (float32, error) {
	var ms C.float
	err := cuCheck("cuEventElapsedTime", C.wt_cuEventElapsedTime(ctx, &ms, a, b))
	return float32(ms), err
}

func eventDestroy(ctx cuContext, e cuEvent) {
	C.wt_cuEventDestroy(ctx, e)
}

// loadModule loads a CUBIN (or PTX) image and returns its kernel entry.
func loadModule(ctx cuContext, image []byte, entry string) (cuFunction, error) {
	// The driver reads the image during the call only; a C copy keeps the
	// Go slice out of C's hands and NUL-terminates PTX.
	img := C.CBytes(append(append([]byte{}, image...), 0))
	defer C.free(img)
	var m C.CUmodule
	if err := cuCheck("cuModuleLoadData", C.wt_cuModuleLoadData(ctx, &m, img)); err != nil {
		return nil, err
	}
	name := C.CString(entry)
	defer C.free(unsafe.Pointer(name))
	var f C.CUfunction
	if err := cuCheck("cuModuleGetFunction", C.wt_cuModuleGetFunction(ctx, &f, m, name)); err != nil {
		return nil, err
	}
	return f, nil
}

func setMaxDynamicShared(ctx cuContext, f cuFunction, bytes int) error {
	return cuCheck("cuFuncSetAttribute", C.wt_cuFuncSetMaxDynamicShared(ctx, f, C.int(bytes)))
}

// pointerDevice reports where p lives: its memory type (2 device, 1 host,
// 3 array, 4 unified) and device ordinal.
func pointerDevice(ctx cuContext, p devicePtr) (memType, ordinal int, err error) {
	var mt, ord C.int
	err = cuCheck("cuPointerGetAttribute", C.wt_cuPointerDevice(ctx, C.CUdeviceptr(p), &mt, &ord))
	return int(mt), int(ord), err
}

// launch runs f over grid blocks of block threads with args as its one
// by-value parameter.
func launch(ctx cuContext, s cuStream, f cuFunction, grid [3]uint32, block, shmem int, args []byte) error {
	return cuCheck("cuLaunchKernel", C.wt_launch(ctx, f, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block), C.uint(shmem), s, unsafe.Pointer(&args[0]), C.size_t(len(args))))
}
