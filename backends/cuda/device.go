package cuda

// devicePtr is a device address.
type devicePtr = uint64

// device is what the backend needs of a GPU. The driver (driverDevice)
// is the real one; a compile-only stand-in (dryDevice) compiles kernels
// and runs none; the CPU emulator (emuDevice) runs the same kernel sources
// on the host so tests check their results on machines without a GPU.
// Every method is queued on one stream, in order, except download, which
// waits for everything queued before it.
type device interface {
	deviceMemory
	upload(dst devicePtr, src []byte) error
	download(dst []byte, src devicePtr) error
	copy(dst, src devicePtr, n uint64) error
	zero(dst devicePtr, n uint64) error
	// build compiles a kernel's whole source (entry wt_kernel) and loads
	// it; name is for messages.
	build(name, src string) (kernelHandle, error)
	run(k kernelHandle, grid [3]uint32, block, shared int, args []byte) error
	gemm(g *gemmArgs) error
}

// kernelHandle is a loaded kernel, as its device knows it.
type kernelHandle any

// gemmArgs is one column-major strided batched product
// C = alpha op(A) op(B) + beta C, as cublasGemmStridedBatchedEx takes it.
type gemmArgs struct {
	transA, transB         bool
	m, n, k                int
	alpha, beta            float64
	a, b, c                devicePtr
	lda, ldb, ldc          int
	strideA, strideB, strC int64
	batch                  int
	dtypeAB, dtypeC        int
	compute                int
}

// cuBLAS enum values (cublas_api.h, library_types.h).
const (
	cudaR32F  = 0
	cudaR64F  = 1
	cudaR16F  = 2
	cudaR16BF = 14

	computeF32         = 68
	computeF32Pedantic = 69
	computeF32FastTF32 = 77
	computeF64         = 70
)
