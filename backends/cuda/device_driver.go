//go:build linux && cgo

package cuda

import (
	"fmt"
	"sync"
)

// driverDevice is a real GPU through the CUDA driver: the primary context,
// one non-blocking stream, NVRTC for kernels (cached on disk) and cuBLAS,
// created on first use.
type driverDevice struct {
	ctx    cuContext
	stream cuStream
	arch   int
	disk   diskCache

	blasOnce sync.Once
	blas     *cublasHandle
	blasErr  error
}

// driverKernel is a loaded kernel and the dynamic shared memory it has
// been opened up to.
type driverKernel struct {
	fn     cuFunction
	mu     sync.Mutex
	shared int
}

func (d *driverDevice) alloc(n uint64) (devicePtr, error) { return memAlloc(d.ctx, n) }
func (d *driverDevice) free(p devicePtr) error            { return memFree(d.ctx, p) }
func (d *driverDevice) sync() error                       { return streamSync(d.ctx, d.stream) }
func (d *driverDevice) upload(dst devicePtr, src []byte) error {
	return copyToDevice(d.ctx, d.stream, dst, src)
}
func (d *driverDevice) download(dst []byte, src devicePtr) error {
	return copyToHost(d.ctx, d.stream, dst, src)
}
func (d *driverDevice) copy(dst, src devicePtr, n uint64) error {
	return copyDevice(d.ctx, d.stream, dst, src, n)
}
func (d *driverDevice) zero(dst devicePtr, n uint64) error {
	return memsetZero(d.ctx, d.stream, dst, n)
}

func (d *driverDevice) build(name, src string) (kernelHandle, error) {
	image, ok := d.disk.load(src)
	if !ok {
		var err error
		if image, err = nvrtcCompile(name, src, d.arch, true, nil); err != nil {
			return nil, err
		}
		d.disk.store(src, image)
	}
	fn, err := loadModule(d.ctx, image, entry)
	if err != nil {
		return nil, err
	}
	return &driverKernel{fn: fn}, nil
}

func (d *driverDevice) run(k kernelHandle, grid [3]uint32, block, shared int, args []byte) error {
	dk := k.(*driverKernel)
	if shared > 48<<10 {
		dk.mu.Lock()
		if shared > dk.shared {
			if err := setMaxDynamicShared(d.ctx, dk.fn, shared); err != nil {
				dk.mu.Unlock()
				return fmt.Errorf("%d bytes of shared memory: %w", shared, err)
			}
			dk.shared = shared
		}
		dk.mu.Unlock()
	}
	return launch(d.ctx, d.stream, dk.fn, grid, block, shared, args)
}

func (d *driverDevice) cublas() (*cublasHandle, error) {
	d.blasOnce.Do(func() { d.blas, d.blasErr = newCublas(d.ctx, d.stream) })
	return d.blas, d.blasErr
}

func (d *driverDevice) gemm(g *gemmArgs) error {
	h, err := d.cublas()
	if err != nil {
		return err
	}
	return h.gemm(g)
}
