package core

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/core/config"
)

// Device names where a tensor lives: a backend kind and an index.
type Device struct {
	Kind  string // "cpu", "webgpu", "cuda"
	Index int
}

// CPU is the host device.
var CPU = Device{Kind: "cpu"}

func (d Device) String() string {
	if d.Kind == "cpu" {
		return "cpu"
	}
	return d.Kind + ":" + strconv.Itoa(d.Index)
}

// ParseDevice reads "cpu", "webgpu", "webgpu:1", "cuda:0".
func ParseDevice(s string) (Device, error) {
	kind, idx, hasIdx := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	d := Device{Kind: kind}
	if hasIdx {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 {
			return Device{}, fmt.Errorf("device %q: index %q is not a non-negative integer", s, idx)
		}
		d.Index = n
	}
	if kind == "" {
		return Device{}, fmt.Errorf("empty device name (want cpu, webgpu or cuda)")
	}
	return d, nil
}

// ErrDeviceUnavailable marks (errors.Is) a device whose backend did not
// open on this machine: no GPU, no driver, a library missing. Its message
// is the backend's, saying which.
var ErrDeviceUnavailable = errors.New("device unavailable")

// ErrNoDevice marks (errors.Is) the one ErrDeviceUnavailable that is not a
// failure: this machine has no such device at all (no GPU adapter, no
// driver). Backends wrap it in their own no-device errors (webgpu's
// ErrNoAdapter, cuda's ErrNoDevice). Any other reason a backend does not
// open is a fault, which a test or conformance column must not skip over.
// Its text is in the message on purpose: SDKs over the C ABI, which see
// WT_ERR_UNSUPPORTED and the message only, recognise it by NoDeviceText.
var ErrNoDevice = errors.New(NoDeviceText)

// NoDeviceText is ErrNoDevice's message.
const NoDeviceText = "no such device on this machine"

type unavailable struct{ err error }

func (u unavailable) Error() string        { return u.err.Error() }
func (u unavailable) Unwrap() error        { return u.err }
func (u unavailable) Is(target error) bool { return target == ErrDeviceUnavailable }

// Storage is a backend's buffer. Its size is in bytes.
type Storage interface {
	Len() int
	Release()
}

// HostStorage is storage the CPU can address directly (zero-copy reads).
type HostStorage interface {
	Storage
	Host() []byte
}

// Kernel runs one op on one backend.
type Kernel func(k *KernelCall) error

// KernelCall is what a kernel receives: inputs as given (possibly strided
// views), normalised attributes and the outputs, allocated by Call unless
// the op is Dynamic (then the kernel calls SetOutputs).
type KernelCall struct {
	Op      *OpDef
	Inputs  []*Tensor
	Attrs   Attrs
	Outputs []*Tensor
	Backend Backend
}

// SetOutputs installs the outputs of a Dynamic op.
func (k *KernelCall) SetOutputs(ts ...*Tensor) { k.Outputs = ts }

// Alloc makes an uninitialised tensor on the kernel's backend.
func (k *KernelCall) Alloc(shape Shape, dtype DType) (*Tensor, error) {
	return Empty(k.Backend, shape, dtype)
}

// Capabilities tells what a backend can hold and run.
type Capabilities struct {
	DTypes      []DType // dtypes it can store
	Description string  // adapter or driver, for doctor
	// Software marks an emulated device (a software Vulkan driver, say): it
	// works when asked for by name but is never the default, being slower
	// than the CPU backend it emulates a GPU on.
	Software bool
	// NarrowI64 says i64 is held as i32: values outside the i32 range are
	// refused with an error rather than stored.
	NarrowI64 bool
	// MaxKernelBuffers is how many tensors one kernel can bind, inputs and
	// outputs together (WebGPU's storage buffers per shader stage, CUDA's
	// operand slots); 0 means no limit. Graph compilers (core/ir) size
	// fused kernels by it instead of assuming one device's number.
	MaxKernelBuffers int
	// MaxKernelRank is the most dims a kernel's shape descriptors hold;
	// 0 means no limit.
	MaxKernelRank int
}

// Backend is one device's memory and kernels. It is small on purpose: the
// registry and dispatch live in core, a backend only moves bytes and runs
// kernels.
type Backend interface {
	Device() Device
	Capabilities() Capabilities
	Alloc(dtype DType, numel int) (Storage, error)
	Upload(dtype DType, data []byte) (Storage, error)
	// Download copies len(dst) bytes starting at byteOffset into dst.
	Download(s Storage, byteOffset int, dst []byte) error
	// Kernel returns the backend's kernel for op, or nil if it has none.
	Kernel(op string) Kernel
}

type backendEntry struct {
	kind      string
	priority  int
	open      func() (Backend, error)
	openIndex func(index int) (Backend, error) // kinds with several devices
	once      sync.Once
	b         Backend
	err       error
	indexed   map[int]*backendEntry // devices 1, 2, ... of an indexed kind
}

var (
	backendsMu sync.Mutex
	backends   = map[string]*backendEntry{}
	defaultDev *Device
)

// RegisterBackend makes a backend kind available. Higher priority wins when
// the default device is chosen; open is called at most once, on first use.
func RegisterBackend(kind string, priority int, open func() (Backend, error)) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[kind] = &backendEntry{kind: kind, priority: priority, open: open}
}

// RegisterIndexedBackend is RegisterBackend for a kind with several
// devices: open(n) opens device n (webgpu:n), 0 being the best.
func RegisterIndexedBackend(kind string, priority int, open func(index int) (Backend, error)) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[kind] = &backendEntry{kind: kind, priority: priority, openIndex: open,
		open: func() (Backend, error) { return open(0) }}
}

// BackendFor opens (once) and returns the backend of a device.
func BackendFor(d Device) (Backend, error) {
	backendsMu.Lock()
	e, ok := backends[d.Kind]
	if ok && d.Index != 0 && e.openIndex != nil {
		sub := e.indexed[d.Index]
		if sub == nil {
			idx, open := d.Index, e.openIndex
			sub = &backendEntry{kind: e.kind, open: func() (Backend, error) { return open(idx) }}
			if e.indexed == nil {
				e.indexed = map[int]*backendEntry{}
			}
			e.indexed[d.Index] = sub
		}
		e = sub
	}
	backendsMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no backend %q is compiled in (available: %v)", d.Kind, BackendKinds())
	}
	e.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				e.err = fmt.Errorf("opening backend %s: %v", d.Kind, r)
			}
			if e.err != nil {
				e.err = unavailable{e.err}
			}
		}()
		e.b, e.err = e.open()
	})
	if e.err != nil {
		return nil, e.err
	}
	if d.Index != 0 && d.Kind != "cpu" && e.b.Device().Index != d.Index {
		return nil, fmt.Errorf("device %s: only index 0 is supported", d)
	}
	return e.b, nil
}

// BackendKinds lists the compiled-in backend kinds, best first.
func BackendKinds() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	es := make([]*backendEntry, 0, len(backends))
	for _, e := range backends {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].priority > es[j].priority })
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.kind
	}
	return out
}

// Devices lists the devices whose backend opens on this machine, best first,
// with the error of each that does not.
func Devices() (ok []Device, failed map[string]error) {
	failed = map[string]error{}
	for _, k := range BackendKinds() {
		d := Device{Kind: k}
		if _, err := BackendFor(d); err != nil {
			failed[k] = err
			continue
		}
		ok = append(ok, d)
	}
	return ok, failed
}

// DefaultDevice is the device new tensors go to: the value given to
// SetDefaultDevice, else WEBTENSOR_DEVICE if set, else the best device that
// opens and is not a software emulation.
func DefaultDevice() Device {
	backendsMu.Lock()
	if defaultDev != nil {
		d := *defaultDev
		backendsMu.Unlock()
		return d
	}
	backendsMu.Unlock()
	if env := config.String("WEBTENSOR_DEVICE"); env != "" {
		if d, err := ParseDevice(env); err == nil {
			if _, err := BackendFor(d); err == nil {
				return d
			}
		}
	}
	devs, _ := Devices()
	for _, d := range devs {
		if b, err := BackendFor(d); err == nil && !b.Capabilities().Software {
			return d
		}
	}
	return CPU
}

// SetDefaultDevice fixes the default device after checking it opens.
func SetDefaultDevice(d Device) error {
	if _, err := BackendFor(d); err != nil {
		return err
	}
	backendsMu.Lock()
	defaultDev = &d
	backendsMu.Unlock()
	return nil
}
