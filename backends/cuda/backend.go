//go:build linux && cgo

package cuda

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// Backend is one NVIDIA GPU: its primary context (the one PyTorch and
// other runtimes in the process share), one non-blocking stream that every
// kernel, copy and cuBLAS call of the backend is queued on, the caching
// allocator and the compiled kernels. Launches are asynchronous; the host
// waits only when it reads memory (Download, DLPack export to the CPU) or
// calls Sync.
type Backend struct {
	index int
	kind  string // "cuda", or "cuda-dry" / "cuda-emu" for the test devices
	dev   device
	ctx   cuContext // the driver's context (nil on the test devices)
	props deviceProps
	info  Info

	alloc   *allocator
	errWord devicePtr // where kernels report failed checks (wt_fail)

	kmu     sync.Mutex
	kernels map[string]*kfunc // compiled kernels by key

	tf32 atomic.Bool

	mu      sync.Mutex
	launchN uint32
	checks  map[uint32]check // launches with checks since the last sync
	recent  []string         // ops launched since the last sync (for errors)
	broken  error            // a sticky error: the context is unusable
	syncAll bool             // WEBTENSOR_CUDA_SYNC
}

func init() {
	core.RegisterIndexedBackend("cuda", 20, func(index int) (core.Backend, error) { return open(index) })
}

// Probe reports whether a CUDA device can be opened, without opening it:
// the driver's version and device count, or why not.
func Probe() (devices int, driverVersion int, err error) {
	if _, v, err := loadDriver(); err != nil {
		return 0, 0, err
	} else {
		driverVersion = v
	}
	n, err := deviceCount()
	return n, driverVersion, err
}

func open(index int) (*Backend, error) {
	driverPath, version, err := loadDriver()
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda: %w: the driver (%s) sees no GPU", ErrNoDevice, driverPath)
	}
	if index < 0 || index >= n {
		return nil, fmt.Errorf("cuda: no device cuda:%d; this machine has %d (cuda:0 to cuda:%d)", index, n, n-1)
	}
	dev, props, err := queryDevice(index)
	if err != nil {
		return nil, err
	}
	major := majorOf(version)
	nvrtcPath, nvrtcVersion, err := loadNVRTC(major)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s found, but kernels cannot be compiled: %w (set WEBTENSOR_CUDA_LIBS to the folder that holds it)", props.name, err)
	}
	blasPath, err := loadCublas(major)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s found, but matrix products need cuBLAS: %w (set WEBTENSOR_CUDA_LIBS to the folder that holds it)", props.name, err)
	}
	arch, err := compileArch(props.major*10 + props.minor)
	if err != nil {
		return nil, err
	}
	ctx, err := primaryContext(dev)
	if err != nil {
		return nil, err
	}
	stream, err := streamCreate(ctx)
	if err != nil {
		return nil, err
	}
	drv := &driverDevice{ctx: ctx, stream: stream, arch: arch,
		disk: newDiskCache(fmt.Sprintf("sm_%d-nvrtc%s", arch, nvrtcVersion))}
	b := newBackend("cuda", index, drv, props)
	b.ctx = ctx
	b.tf32.Store(config.Bool("WEBTENSOR_CUDA_TF32"))
	b.info = Info{
		Name: props.name, ComputeCapability: fmt.Sprintf("%d.%d", props.major, props.minor),
		Multiprocessors: props.sms, MemoryBytes: props.totalMem,
		DriverVersion: fmt.Sprintf("%d.%d", version/1000, version%1000/10), DriverLibrary: driverPath,
		NVRTCVersion: nvrtcVersion, NVRTCLibrary: nvrtcPath, CublasLibrary: blasPath,
		Arch: fmt.Sprintf("sm_%d", arch),
	}
	if err := b.initErrWord(); err != nil {
		return nil, err
	}
	return b, nil
}

func newBackend(kind string, index int, dev device, props deviceProps) *Backend {
	b := &Backend{kind: kind, index: index, dev: dev, props: props,
		kernels: map[string]*kfunc{}, checks: map[uint32]check{},
		syncAll: config.Bool("WEBTENSOR_CUDA_SYNC")}
	b.alloc = newAllocator(dev)
	return b
}

// initErrWord allocates and clears the word kernels report failed checks
// in (wt_fail).
func (b *Backend) initErrWord() error {
	var err error
	if b.errWord, err = b.alloc.get(64); err != nil {
		return err
	}
	return b.dev.zero(b.errWord, 64)
}

// compileArch is the architecture NVRTC builds for: the device's own, or
// the newest NVRTC knows below it (the driver runs older machine code), or
// WEBTENSOR_CUDA_ARCH.
func compileArch(device int) (int, error) {
	archs, err := supportedArchs()
	if err != nil {
		return 0, err
	}
	if s := config.String("WEBTENSOR_CUDA_ARCH"); s != "" {
		var a int
		if _, err := fmt.Sscanf(s, "sm_%d", &a); err != nil {
			return 0, fmt.Errorf("cuda: WEBTENSOR_CUDA_ARCH=%q: want sm_NN, for example sm_90", s)
		}
		device = a
	}
	sort.Ints(archs)
	best := 0
	for _, a := range archs {
		if a <= device {
			best = a
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("cuda: this NVRTC builds for %v, nothing at or below the device's sm_%d; use an older CUDA toolkit's NVRTC", archs, device)
	}
	return best, nil
}

// Device is cuda:n (or the test devices' cuda-dry and cuda-emu).
func (b *Backend) Device() core.Device { return core.Device{Kind: b.kind, Index: b.index} }

// NewCompileOnly makes a backend that generates and compiles every kernel
// it is asked to run (for sm_NN arch) but runs none and touches no GPU: its
// memory is fake and reads return zeros. Tests use it on machines without
// a GPU to compile the kernels of the whole op suite with NVRTC; it needs
// only NVRTC (found as the real backend finds it). Its device kind is
// cuda-dry. What it compiles goes to the real backend's disk cache, so a
// parallel compile-only run warms the cache for a GPU of that architecture
// (and the same multiprocessor count, 132, which shapes some kernels).
func NewCompileOnly(arch int) (*Backend, error) {
	_, version, err := loadNVRTC("")
	if err != nil {
		return nil, err
	}
	dev := &dryDevice{fakeMemory: fakeMemory{next: 1 << 20}, arch: arch, disk: newDiskCache(fmt.Sprintf("sm_%d-nvrtc%s", arch, version))}
	b := newBackend("cuda-dry", 0, dev,
		deviceProps{name: "compile-only", sms: 132})
	b.info = Info{Name: "compile-only", Arch: fmt.Sprintf("sm_%d", arch)}
	return b, b.initErrWord()
}

// Info describes the GPU and libraries.
func (b *Backend) Info() Info { return b.info }

// Capabilities: every dtype natively, but u64 (unsupportedDType).
func (b *Backend) Capabilities() core.Capabilities {
	desc := fmt.Sprintf("%s (compute capability %s, %d SMs, %s; driver CUDA %s, NVRTC %s, kernels for %s)",
		b.info.Name, b.info.ComputeCapability, b.info.Multiprocessors, humanBytes(b.info.MemoryBytes),
		b.info.DriverVersion, b.info.NVRTCVersion, b.info.Arch)
	var dts []core.DType
	for _, d := range append(append([]core.DType{}, core.AllDTypes...), core.ComplexDTypes...) {
		if unsupportedDType(d) == nil {
			dts = append(dts, d)
		}
	}
	return core.Capabilities{DTypes: dts, Description: desc,
		MaxKernelBuffers: maxOps, MaxKernelRank: maxRank}
}

// Alloc makes uninitialised storage for numel elements.
func (b *Backend) Alloc(dtype core.DType, numel int) (core.Storage, error) {
	if !dtype.Valid() {
		return nil, fmt.Errorf("cuda: invalid dtype %v", dtype)
	}
	if err := unsupportedDType(dtype); err != nil {
		return nil, err
	}
	if numel < 0 {
		return nil, fmt.Errorf("cuda: negative element count %d", numel)
	}
	if err := b.usable(); err != nil {
		return nil, err
	}
	return b.newStorage(dtype, numel)
}

// Upload copies data (little-endian elements of dtype) to the device.
func (b *Backend) Upload(dtype core.DType, data []byte) (core.Storage, error) {
	if !dtype.Valid() || len(data)%dtype.Size() != 0 {
		return nil, fmt.Errorf("cuda: %d bytes is not a whole number of %v elements", len(data), dtype)
	}
	s, err := b.Alloc(dtype, len(data)/dtype.Size())
	if err != nil {
		return nil, err
	}
	st := s.(*storage)
	if err := b.dev.upload(st.ptr, data); err != nil {
		st.Release()
		return nil, b.fault("upload", err)
	}
	return st, nil
}

// Download copies len(dst) bytes from byteOffset into dst, waiting for the
// work queued before it. A check a kernel failed since the last wait is
// reported here.
func (b *Backend) Download(s core.Storage, byteOffset int, dst []byte) error {
	st, ok := s.(*storage)
	if !ok {
		return fmt.Errorf("cuda: storage %T is not from the cuda backend", s)
	}
	if byteOffset < 0 || byteOffset+len(dst) > st.Len() {
		return fmt.Errorf("cuda: download of %d bytes at %d from a %d-byte buffer is out of range", len(dst), byteOffset, st.Len())
	}
	if st.released.Load() {
		return fmt.Errorf("cuda: download from released storage")
	}
	if err := b.usable(); err != nil {
		return err
	}
	if err := b.dev.download(dst, st.ptr+uint64(byteOffset)); err != nil {
		return b.fault("download", err)
	}
	runtime.KeepAlive(st)
	return b.afterSync()
}

// Sync waits for every queued kernel and reports a failed check or fault.
func (b *Backend) Sync() error {
	if err := b.usable(); err != nil {
		return err
	}
	if err := b.dev.sync(); err != nil {
		return b.fault("sync", err)
	}
	return b.afterSync()
}

// Kernel returns the backend's kernel for op, or nil for core's CPU
// fallback.
func (b *Backend) Kernel(op string) core.Kernel { return core.LookupKernel("cuda", op) }

// KernelFor is Kernel answered from the op's memo (core.DefKerneler).
func (b *Backend) KernelFor(def *core.OpDef) core.Kernel { return core.LookupKernelFor("cuda", def) }

func cudaOf(k *core.KernelCall) *Backend { return k.Backend.(*Backend) }

// register installs a built-in CUDA kernel in core's registry; the
// kernels_*.go files call it from init.
func register(op string, k core.Kernel) { core.MustRegisterKernel("cuda", op, k) }

// MemoryStats reports the allocator's counters.
func (b *Backend) MemoryStats() MemoryStats { return b.alloc.snapshot() }

// MemoryInUse is the bytes tensors hold (what a trace's memory counter
// shows).
func (b *Backend) MemoryInUse() int64 { return int64(b.alloc.snapshot().Allocated) }

// EmptyCache returns cached blocks to the driver (tensors keep theirs).
func (b *Backend) EmptyCache() error { return b.alloc.emptyCache() }

// DeviceMemory is the driver's view: bytes free and total on the GPU.
func (b *Backend) DeviceMemory() (free, total uint64, err error) {
	if b.ctx == nil {
		return 0, 0, fmt.Errorf("cuda: %s has no device memory to report", b.kind)
	}
	return memInfo(b.ctx)
}

// SetAllowTF32 lets f32 matrix products use TF32 tensor cores (off by
// default: f32 means f32).
func (b *Backend) SetAllowTF32(on bool) { b.tf32.Store(on) }

// AllowTF32 says whether f32 products may use TF32.
func (b *Backend) AllowTF32() bool { return b.tf32.Load() }

// CheckArgsLayout compiles a kernel that asserts WtArgs's field offsets
// and size equal the Go mirror's (wtArgs), for tests.
func (b *Backend) CheckArgsLayout() error {
	_, emulated := b.dev.(*emuDevice)
	_, err := b.dev.build("args_layout", prelude+"\n"+argsLayoutSource(emulated))
	return err
}
