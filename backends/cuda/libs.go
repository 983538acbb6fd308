//go:build linux && cgo

package cuda

/*
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

// NVRTC and cuBLAS: loaded once per process, on first use, so a machine
// with a driver but no toolkit still opens the backend's memory functions
// and says precisely what is missing when a kernel is needed.

type libState struct {
	once    sync.Once
	path    string
	version string
	err     error
}

var nvrtcLib, cublasLib libState

// loadNVRTC loads NVRTC; driverMajor orders the candidates.
func loadNVRTC(driverMajor string) (path, version string, err error) {
	nvrtcLib.once.Do(func() {
		nvrtcLib.path, nvrtcLib.err = loadLib(libNVRTC, "NVRTC (libnvrtc.so.12/13, from a CUDA toolkit or `pip install nvidia-cuda-nvrtc`)",
			libraryCandidates("libnvrtc", driverMajor))
		if nvrtcLib.err != nil {
			return
		}
		var maj, min C.int
		if r := C.wt_nvrtcVersion(&maj, &min); r != 0 {
			nvrtcLib.err = fmt.Errorf("nvrtcVersion: %s", C.GoString(C.wt_nvrtcErrorString(r)))
			return
		}
		nvrtcLib.version = fmt.Sprintf("%d.%d", maj, min)
	})
	return nvrtcLib.path, nvrtcLib.version, nvrtcLib.err
}

// loadCublas loads cuBLASLt and then cuBLAS (which needs Lt beside it).
func loadCublas(driverMajor string) (path string, err error) {
	cublasLib.once.Do(func() {
		lt := libraryCandidates("libcublasLt", driverMajor)
		if _, err := loadLib(libCublasLt, "cuBLASLt (libcublasLt.so.12/13)", lt); err != nil {
			cublasLib.err = err
			return
		}
		cublasLib.path, cublasLib.err = loadLib(libCublas, "cuBLAS (libcublas.so.12/13, from a CUDA toolkit or `pip install nvidia-cublas`)",
			libraryCandidates("libcublas", driverMajor))
	})
	return cublasLib.path, cublasLib.err
}

// supportedArchs lists the sm_NN NVRTC can build for (90 for sm_90).
func supportedArchs() ([]int, error) {
	var n C.int
	buf := make([]C.int, 128)
	if r := C.wt_nvrtcSupportedArchs(&buf[0], C.int(len(buf)), &n); r != 0 {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %s", C.GoString(C.wt_nvrtcErrorString(r)))
	}
	if int(n) > len(buf) {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %d architectures, more than %d", n, len(buf))
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(buf[i])
	}
	return out, nil
}

// CompileError is a kernel NVRTC refused, with its log.
type CompileError struct {
	Name string
	Log  string
	Msg  string
}

func (e *CompileError) Error() string {
	log := strings.TrimSpace(e.Log)
	if len(log) > 4000 {
		log = log[:4000] + "..."
	}
	return fmt.Sprintf("cuda: could not compile kernel %s: %s\n%s", e.Name, e.Msg, log)
}

// nvrtcCompile compiles src for arch (sm_NN). cubin says whether to return
// machine code (CUBIN) or PTX.
func nvrtcCompile(name, src string, arch int, cubin bool, extra []string) ([]byte, error) {
	target := fmt.Sprintf("--gpu-architecture=sm_%d", arch)
	if !cubin {
		target = fmt.Sprintf("--gpu-architecture=compute_%d", arch)
	}
	// No contraction of a*b+c into one rounding (fmad): a kernel's
	// arithmetic then rounds op by op like the CPU backend's and an unfused
	// op chain's, so fused kernels (FusesExactly) give the same bits.
	opts := append([]string{target, "--std=c++17", "-default-device", "--fmad=false"}, extra...)
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
	}
	defer func() {
		for _, c := range copts {
			C.free(unsafe.Pointer(c))
		}
	}()
	csrc, cname := C.CString(src), C.CString(name+".cu")
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var out, log *C.char
	var n C.size_t
	want := C.int(0)
	if cubin {
		want = 1
	}
	r := C.wt_nvrtcCompile(csrc, cname, &copts[0], C.int(len(copts)), want, &out, &n, &log)
	defer C.free(unsafe.Pointer(out))
	defer C.free(unsafe.Pointer(log))
	if r != 0 {
		return nil, &CompileError{Name: name, Log: C.GoString(log), Msg: C.GoString(C.wt_nvrtcErrorString(r))}
	}
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}

// cublasHandle is one cuBLAS handle bound to the backend's stream.
type cublasHandle struct {
	h       C.cublasHandle_t
	ctx     cuContext
	version int
	mu      sync.Mutex // a handle serves one call at a time
}

func cublasErr(call string, st C.cublasStatus_t) error {
	if st == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s", call, C.GoString(C.wt_cublasStatusName(st)))
}

func newCublas(ctx cuContext, s cuStream) (*cublasHandle, error) {
	var h C.cublasHandle_t
	var v [1]C.int
	if err := cublasErr("cublasCreate", C.wt_cublasCreate(ctx, &h, s, &v[0])); err != nil {
		return nil, err
	}
	return &cublasHandle{h: h, ctx: ctx, version: int(v[0])}, nil
}

func (h *cublasHandle) gemm(g *gemmArgs) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	tr := func(t bool) C.int {
		if t {
			return 1
		}
		return 0
	}
	st := C.wt_cublasGemm(h.ctx, h.h, tr(g.transA), tr(g.transB), C.int(g.m), C.int(g.n), C.int(g.k), C.double(g.alpha),
		C.CUdeviceptr(g.a), C.int(g.dtypeAB), C.int(g.lda), C.longlong(g.strideA),
		C.CUdeviceptr(g.b), C.int(g.dtypeAB), C.int(g.ldb), C.longlong(g.strideB), C.double(g.beta),
		C.CUdeviceptr(g.c), C.int(g.dtypeC), C.int(g.ldc), C.longlong(g.strC), C.int(g.batch), C.int(g.compute))
	return cublasErr("cublasGemmStridedBatchedEx", st)
}

func (h *cublasHandle) setWorkspace(p devicePtr, bytes uint64) error {
	return cublasErr("cublasSetWorkspace", C.wt_cublasSetWorkspace(h.ctx, h.h, C.CUdeviceptr(p), C.size_t(bytes)))
}

func (h *cublasHandle) setMathMode(mode int) error {
	return cublasErr("cublasSetMathMode", C.wt_cublasSetMathMode(h.ctx, h.h, C.int(mode)))
}
