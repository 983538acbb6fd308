package webgpu

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cogentcore/webgpu/wgpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/wgsl"
)

// Backend is one WebGPU device. All of its state is guarded by mu: kernels
// may be called from several goroutines (the C ABI serves many threads).
type Backend struct {
	mu       sync.Mutex
	index    int // n of webgpu:n
	adapter  *wgpu.Adapter
	device   *wgpu.Device
	queue    *wgpu.Queue
	info     wgpu.AdapterInfo
	limits   wgpu.Limits
	software bool
	features []wgpu.FeatureName

	pool    bufferPool
	staging bufferPool
	gc      gpuPacer
	// unsubmitted counts bytes written through the queue since the last
	// submission: wgpu-native holds a staging copy of each until one.
	unsubmitted uint64
	polling     bool // a goroutine polls until the queue is empty (reclaimLocked)
	loopOnce    sync.Once
	loops       int // the driver's loop limit per invocation, 0 if none (loopLimit)
	pipes       map[string]*pipeline
	// kernel cache counters (KernelCacheStats)
	kernelLookups, kernelHits atomic.Int64
	batch                     batch
	tuner                     tuner
	disk                      diskCache // sources and tuning decisions kept for the next process
	profile                   kernelProfile
}

func init() {
	core.RegisterIndexedBackend("webgpu", 10, func(index int) (core.Backend, error) { return open(index) })
}

var (
	instanceOnce sync.Once
	instance     *wgpu.Instance
)

// theInstance is the process's one wgpu instance (newInstance says how it
// is made and why).
func theInstance() *wgpu.Instance {
	instanceOnce.Do(func() {
		if config.String("WEBTENSOR_WGPU_LOG") == "" {
			wgpu.SetLogLevel(wgpu.LogLevelError)
		}
		instance = newInstance()
	})
	return instance
}

// ErrNoAdapter says this machine offers no WebGPU adapter at all (as
// opposed to one that failed): what a test may skip for. It is
// core.ErrNoDevice too, so conformance and the SDKs tell it from a fault.
var ErrNoAdapter = fmt.Errorf("no adapter found: %w", core.ErrNoDevice)

func open(index int) (*Backend, error) {
	if err := canBlock(); err != nil {
		return nil, fmt.Errorf("webgpu: the browser opens its GPU only in the async init (await wt.init()), not in a synchronous call")
	}
	inst := theInstance()
	if inst == nil {
		return nil, fmt.Errorf("webgpu: no wgpu instance could be created: %w", ErrNoAdapter)
	}
	adapter, err := pickAdapter(inst, index)
	if err != nil {
		return nil, err
	}
	info := adapterInfo(adapter)
	supported := adapter.GetLimits().Limits
	want := wgpu.DefaultLimits()
	// Ask for the larger buffer limits the adapter offers: big tensors
	// otherwise hit the 128 MiB binding default.
	want.MaxStorageBufferBindingSize = supported.MaxStorageBufferBindingSize
	want.MaxBufferSize = supported.MaxBufferSize
	want.MaxStorageBuffersPerShaderStage = min(supported.MaxStorageBuffersPerShaderStage, 10)
	want.MaxComputeWorkgroupStorageSize = supported.MaxComputeWorkgroupStorageSize
	want.MaxComputeInvocationsPerWorkgroup = min(supported.MaxComputeInvocationsPerWorkgroup, 256)
	features := requiredFeatures(adapter)
	dev, err := adapter.RequestDevice(&wgpu.DeviceDescriptor{
		Label:            "webtensor",
		RequiredFeatures: features,
		RequiredLimits:   &wgpu.RequiredLimits{Limits: want},
	})
	if err != nil {
		return nil, fmt.Errorf("webgpu: adapter %q refused a device with limits %+v: %w", info.DriverDescription, want, err)
	}
	watchErrors(dev)
	b := &Backend{
		index:   index,
		adapter: adapter, device: dev, queue: dev.GetQueue(), info: info, limits: want, features: features,
		software: info.AdapterType == wgpu.AdapterTypeCPU,
		pipes:    map[string]*pipeline{},
	}
	b.pool.usage = wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
	b.staging.usage = wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst
	b.pool.device, b.staging.device = dev, dev
	b.tuner.device = strings.TrimSpace(info.DriverDescription) + "/" + info.BackendType.String()
	b.tuner.fallback = defaultMatmul
	if b.software {
		b.tuner.fallback = variantRegBlock
	}
	b.tuner.sync = b.Sync
	b.tuner.uses.opOf = b.currentOp
	b.tuner.software = b.software
	b.disk.device = deviceSignature(info, features)
	b.tuner.disk = &b.disk
	if err := adoptPolicy(b); err != nil {
		dev.Release()
		return nil, err
	}
	return b, nil
}

// pickAdapter ranks the adapters (discrete, integrated, other GPUs, then
// software) and returns the index-th: webgpu:0 is the best one.
func pickAdapter(inst *wgpu.Instance, index int) (*wgpu.Adapter, error) {
	ads := inst.EnumerateAdapters(&wgpu.InstanceEnumerateAdapterOptons{Backends: wgpu.InstanceBackendPrimary})
	if len(ads) == 0 {
		return nil, fmt.Errorf("webgpu: %w (no Vulkan, Metal or DX12 driver; on Debian install mesa-vulkan-drivers for a software one)", ErrNoAdapter)
	}
	rank := func(t wgpu.AdapterType) int {
		switch t {
		case wgpu.AdapterTypeDiscreteGPU:
			return 0
		case wgpu.AdapterTypeIntegratedGPU:
			return 1
		case wgpu.AdapterTypeCPU:
			return 3
		}
		return 2
	}
	// One GetInfo per adapter: each call allocates strings in wgpu-native.
	ranks := make(map[*wgpu.Adapter]int, len(ads))
	for _, a := range ads {
		ranks[a] = rank(a.GetInfo().AdapterType)
	}
	sort.SliceStable(ads, func(i, j int) bool { return ranks[ads[i]] < ranks[ads[j]] })
	if index < 0 || index >= len(ads) {
		return nil, fmt.Errorf("webgpu: no adapter webgpu:%d; this machine has %d (webgpu:0 to webgpu:%d; see webtensor doctor)", index, len(ads), len(ads)-1)
	}
	return ads[index], nil
}

// Device is webgpu:n.
func (b *Backend) Device() core.Device { return core.Device{Kind: "webgpu", Index: b.index} }

// Capabilities lists what the GPU stores: every dtype but f64 and u64.
func (b *Backend) Capabilities() core.Capabilities {
	dts := make([]core.DType, 0, len(core.AllDTypes))
	for _, d := range core.AllDTypes {
		if d != core.F64 && d != core.U64 {
			dts = append(dts, d)
		}
	}
	dts = append(dts, core.C64) // as pairs of f32 (core stores complex as its parts)
	desc := fmt.Sprintf("%s (%s, %s)", strings.TrimSpace(b.info.DriverDescription), b.info.BackendType, b.info.AdapterType)
	return core.Capabilities{DTypes: dts, Description: desc, Software: b.software, NarrowI64: true,
		MaxKernelBuffers: b.maxBuffers(), MaxKernelRank: wgsl.MaxRank}
}

// Info describes the adapter, for tests and doctor.
func (b *Backend) Info() wgpu.AdapterInfo { return b.info }

// Alloc makes uninitialised storage for numel elements of dtype.
func (b *Backend) Alloc(dtype core.DType, numel int) (core.Storage, error) {
	if err := checkDType(dtype); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.newStorage(dtype, numel)
}

// Upload copies data (numel elements of dtype, little-endian) to the GPU.
func (b *Backend) Upload(dtype core.DType, data []byte) (core.Storage, error) {
	if err := checkDType(dtype); err != nil {
		return nil, err
	}
	words, err := toPhysical(dtype, data)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.newStorage(dtype, len(data)/dtype.Size())
	if err != nil {
		return nil, err
	}
	if len(words) > 0 {
		if err := b.writeBuffer(s.slot.buf, 0, words); err != nil {
			s.cleanup.Stop()
			b.retireLocked(s.slot)
			return nil, fmt.Errorf("webgpu: upload of %d bytes: %w", len(words), err)
		}
		if b.unsubmitted >= uploadSubmitBytes {
			b.reclaimLocked()
		}
	}
	return s, nil
}

// Download copies len(dst) bytes of the logical dtype from byteOffset.
func (b *Backend) Download(s core.Storage, byteOffset int, dst []byte) error {
	if err := runDeferredChecks(); err != nil {
		return err
	}
	st, ok := s.(*storage)
	if !ok {
		return fmt.Errorf("webgpu: storage %T is not from the webgpu backend", s)
	}
	size := st.dtype.Size()
	if byteOffset%size != 0 || len(dst)%size != 0 || byteOffset < 0 || byteOffset+len(dst) > st.Len() {
		return fmt.Errorf("webgpu: download of %d bytes at %d from a %d-byte %v buffer is out of range or misaligned", len(dst), byteOffset, st.Len(), st.dtype)
	}
	if len(dst) == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if st.slot.released {
		return fmt.Errorf("webgpu: download from released storage")
	}
	words, err := b.readback(st.slot.buf, uint64(byteOffset/size)*4, uint64(len(dst)/size)*4)
	if err != nil {
		return err
	}
	return fromPhysical(st.dtype, words, dst)
}

func checkDType(d core.DType) error {
	if d == core.F64 {
		return fmt.Errorf("webgpu: f64 is not supported on the GPU (WGSL has no f64); cast to f32 first, or use device cpu")
	}
	if d == core.U64 {
		// i64's narrowing (values checked into i32 on upload and on every
		// result) would carry over, but every integer kernel's range guard
		// would need a u32 twin: until then u64 is refused as f64 is.
		return fmt.Errorf("webgpu: u64 is not supported on the GPU (WGSL has no 64-bit integers); " +
			"cast to u32 or i64 first (i64 is held as i32), or use device cpu")
	}
	if !d.Valid() {
		return fmt.Errorf("webgpu: invalid dtype %v", d)
	}
	return nil
}

// Kernel returns the WGSL kernel for op: a built-in one, else the WGSL an
// op definition carries (plugin ops), else nil for core's CPU fallback.
func (b *Backend) Kernel(op string) core.Kernel {
	if k := core.LookupKernel("webgpu", op); k != nil {
		if b.profiling() {
			return b.profiled(op, k)
		}
		return k
	}
	if def, ok := core.LookupOp(op); ok && def.WGSL != "" {
		return carriedKernelFor(def)
	}
	return nil
}

// register installs a built-in WebGPU kernel in core's registry; the
// kernels_*.go files call it from init.
func register(op string, k core.Kernel) { core.MustRegisterKernel("webgpu", op, k) }

// maxBuffers is how many storage buffers one kernel may bind: 8 by
// WebGPU's default, up to 10 where the adapter offers them (open).
func (b *Backend) maxBuffers() int { return int(b.limits.MaxStorageBuffersPerShaderStage) }

// epilogueRoom is how many extra operands an epilogue may read in a kernel
// that binds bound buffers already (its producer's operands and outputs).
func (b *Backend) epilogueRoom(bound int) int { return b.maxBuffers() - bound }

// Limits are the device limits the backend asked for and got.
func (b *Backend) Limits() wgpu.Limits { return b.limits }

// CompileCheck compiles WGSL source as a one-input kernel under key and
// reports the compiler's error, for tests and plugin authors. The source is
// never kept on disk: the caller's key need not change with its source.
func (b *Backend) CompileCheck(key, src string) error {
	_, err := b.pipeline(key, 1, 1, 0, false, func() (string, error) { return src, nil })
	return err
}

// Features lists the optional device features the backend requested.
func (b *Backend) Features() []string {
	out := make([]string, len(b.features))
	for i, f := range b.features {
		out[i] = f.String()
	}
	return out
}
