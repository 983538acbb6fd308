//go:build linux && cgo

package cuda

/*
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int (*wt_emu_run_fn)(unsigned, unsigned, unsigned, unsigned, const void *, int);

static int wt_emu_call(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, const void *args, int coop) {
	return ((wt_emu_run_fn)fn)(gx, gy, gz, bx, args, coop);
}

static void *wt_emu_open(const char *path, char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) { *err = dlerror(); return NULL; }
	void *f = dlsym(h, "wt_emu_run");
	if (!f) *err = dlerror();
	return f;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/core/numerics"
)

// emuDevice runs kernels on the CPU: each kernel's CUDA source, between
// cu/emu_head.h and cu/emu_tail.h, is compiled by the host C++ compiler
// into a shared library and called; memory is host memory; cuBLAS's
// product is done in Go. It is for tests (NewEmulated), so CI checks the
// CUDA kernels' results against the reference vectors without a GPU.
type emuDevice struct {
	mu   sync.Mutex // the emulator keeps a launch's state in statics
	dir  string     // compiled kernels, by source hash
	cxx  string
	live map[devicePtr]uint64

	preludeOnce    sync.Once
	preludeInclude string // includes the precompiled prelude; "" if none
}

var (
	emuHead = mustRead("cu/emu_head.h")
	emuTail = mustRead("cu/emu_tail.h")
)

type emuKernel struct {
	fn   unsafe.Pointer
	coop bool // synchronises threads: run them as fibers
}

// NewEmulated makes a backend (device kind cuda-emu) whose kernels run on
// the CPU through the emulator. It needs a C++ compiler (g++, or $CXX).
func NewEmulated() (*Backend, error) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		return nil, fmt.Errorf("cuda emulator: no C++ compiler (%s): %w", cxx, err)
	}
	root := config.String("WEBTENSOR_CACHE_DIR")
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, err
		}
		root = filepath.Join(base, "webtensor")
	}
	dev := &emuDevice{dir: filepath.Join(root, "cuda-emu"), cxx: cxx, live: map[devicePtr]uint64{}}
	if err := os.MkdirAll(dev.dir, 0o755); err != nil {
		return nil, err
	}
	b := newBackend("cuda-emu", 0, dev, deviceProps{name: "CUDA emulator", sms: 4})
	b.info = Info{Name: "CUDA emulator (CPU)", Arch: "host"}
	return b, b.initErrWord()
}

// poison fills new memory with 0xff bytes (NaN as floats, -1 as
// integers), so a kernel that leaves an output element unwritten fails
// the comparison instead of passing on zeros.
const poison = 0xff

func (d *emuDevice) alloc(n uint64) (devicePtr, error) {
	p := C.malloc(C.size_t(n))
	if p == nil {
		return 0, fmt.Errorf("cuda emulator: %w", ErrOutOfMemory)
	}
	C.memset(p, poison, C.size_t(n))
	d.mu.Lock()
	d.live[devicePtr(uintptr(p))] = n
	d.mu.Unlock()
	return devicePtr(uintptr(p)), nil
}

func (d *emuDevice) free(p devicePtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.live[p]; !ok {
		return fmt.Errorf("cuda emulator: free of %#x, not allocated", p)
	}
	delete(d.live, p)
	C.free(ptr(p))
	return nil
}

// ptr turns an emulated device address (a C heap address, which the Go
// collector never moves or frees) back into a pointer.
func ptr(p devicePtr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), uintptr(p)) }

func (d *emuDevice) sync() error { return nil }
func (d *emuDevice) upload(dst devicePtr, src []byte) error {
	if len(src) > 0 {
		C.memcpy(ptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)))
	}
	return nil
}
func (d *emuDevice) download(dst []byte, src devicePtr) error {
	if len(dst) > 0 {
		C.memcpy(unsafe.Pointer(&dst[0]), ptr(src), C.size_t(len(dst)))
	}
	return nil
}
func (d *emuDevice) copy(dst, src devicePtr, n uint64) error {
	if n > 0 {
		C.memmove(ptr(dst), ptr(src), C.size_t(n))
	}
	return nil
}
func (d *emuDevice) zero(dst devicePtr, n uint64) error {
	if n > 0 {
		C.memset(ptr(dst), 0, C.size_t(n))
	}
	return nil
}

func (d *emuDevice) build(name, src string) (kernelHandle, error) {
	full := emuHead + src + "\n" + emuTail
	lib := filepath.Join(d.dir, sourceKey(full)+".so")
	if _, err := os.Stat(lib); err != nil {
		text := full
		if body, ok := strings.CutPrefix(src, prelude); ok {
			if include := d.precompiledPrelude(); include != "" {
				text = include + body + "\n" + emuTail
			}
		}
		if err := d.compile(name, text, lib); err != nil {
			return nil, err
		}
	}
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var cerr *C.char
	fn := C.wt_emu_open(clib, &cerr)
	if fn == nil {
		return nil, fmt.Errorf("cuda emulator: loading %s: %s", name, C.GoString(cerr))
	}
	coop := strings.Contains(src, "__syncthreads") || strings.Contains(src, "__shfl")
	return &emuKernel{fn: fn, coop: coop}, nil
}

// compile builds the shared library, through a temporary name so that a
// concurrent test never loads half a file.
func (d *emuDevice) compile(name, full, lib string) error {
	srcFile, err := os.CreateTemp(d.dir, name+"-*.cc")
	if err != nil {
		return err
	}
	defer os.Remove(srcFile.Name())
	if _, err := srcFile.WriteString(full); err != nil {
		srcFile.Close()
		return err
	}
	srcFile.Close()
	tmp := lib + ".tmp" + filepath.Base(srcFile.Name())
	cmd := exec.Command(d.cxx, append(emuFlags, "-pipe", "-shared", "-o", tmp, srcFile.Name())...)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return &CompileError{Name: name + " (emulator)", Log: string(out), Msg: err.Error()}
	}
	return os.Rename(tmp, lib)
}

func (d *emuDevice) run(k kernelHandle, grid [3]uint32, block, _ int, args []byte) error {
	ek := k.(*emuKernel)
	coop := C.int(0)
	if ek.coop {
		coop = 1
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if rc := C.wt_emu_call(ek.fn, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block), unsafe.Pointer(&args[0]), coop); rc != 0 {
		return fmt.Errorf("cuda emulator: launch failed (%d)", rc)
	}
	return nil
}

// gemm is cuBLAS's strided batched product, in float64, column-major.
func (d *emuDevice) gemm(g *gemmArgs) error {
	read := func(dtype int, base devicePtr, i int64) float64 {
		switch dtype {
		case cudaR32F:
			return float64(*(*float32)(ptr(base + uint64(4*i))))
		case cudaR64F:
			return *(*float64)(ptr(base + uint64(8*i)))
		case cudaR16F:
			return float64(numerics.F16Float(*(*uint16)(ptr(base + uint64(2*i)))))
		case cudaR16BF:
			return float64(math.Float32frombits(uint32(*(*uint16)(ptr(base + uint64(2*i)))) << 16))
		}
		return math.NaN()
	}
	write := func(dtype int, base devicePtr, i int64, v float64) {
		switch dtype {
		case cudaR32F:
			*(*float32)(ptr(base + uint64(4*i))) = float32(v)
		case cudaR64F:
			*(*float64)(ptr(base + uint64(8*i))) = v
		case cudaR16F:
			*(*uint16)(ptr(base + uint64(2*i))) = numerics.F16Bits(float32(v))
		case cudaR16BF:
			*(*uint16)(ptr(base + uint64(2*i))) = numerics.BF16Bits(float32(v))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for bi := 0; bi < g.batch; bi++ {
		oa, ob, oc := int64(bi)*g.strideA, int64(bi)*g.strideB, int64(bi)*g.strC
		for j := 0; j < g.n; j++ {
			for i := 0; i < g.m; i++ {
				var s float64
				for l := 0; l < g.k; l++ {
					ai := int64(i) + int64(l)*int64(g.lda)
					if g.transA {
						ai = int64(l) + int64(i)*int64(g.lda)
					}
					bj := int64(l) + int64(j)*int64(g.ldb)
					if g.transB {
						bj = int64(j) + int64(l)*int64(g.ldb)
					}
					s += read(g.dtypeAB, g.a, oa+ai) * read(g.dtypeAB, g.b, ob+bj)
				}
				ci := oc + int64(i) + int64(j)*int64(g.ldc)
				v := g.alpha * s
				if g.beta != 0 {
					v += g.beta * read(g.dtypeC, g.c, ci)
				}
				write(g.dtypeC, g.c, ci, v)
			}
		}
	}
	return nil
}
