package core

import (
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
)

// Meta is what shape inference sees of a tensor: its shape and dtype.
// A missing optional input has DType Invalid.
type Meta struct {
	Shape Shape
	DType DType
}

// InputSpec declares one tensor input. Only the last input may be Variadic
// (concat, stack, einsum); Optional inputs may be passed as nil.
type InputSpec struct {
	Name     string
	DTypes   []DType // accepted dtypes; nil accepts every dtype
	Optional bool
	Variadic bool
	NoGrad   bool // never differentiated (indices, masks)
}

// Sample is one test case of an op: how to make its inputs, its attributes.
// The same samples feed the reference vectors (NumPy/PyTorch), the shared
// backend suite and the finite-difference gradient checks.
type Sample struct {
	Name   string
	Inputs []Gen
	Attrs  Attrs
	NoGrad bool // the op is not smooth at these inputs: skip gradient checks
}

// Gen says how to generate one sample input. Kind is one of
// "randn" (default), "uniform" (Lo..Hi), "positive" (0.5..2), "int" (Lo..Hi-1),
// "bool", "special" (finite values mixed with NaN, ±inf, ±0, huge and tiny) or
// "values" (Values taken as given, repeated to fill the shape).
// Strided makes the input non-contiguous (a transposed view) with the same values.
type Gen struct {
	Shape   Shape
	DType   DType
	Kind    string
	Lo, Hi  float64
	Values  []float64
	Strided bool
	Absent  bool // an optional input left out (passed as nil)
}

// OpDef declares an op once. Every other artefact is derived from it.
type OpDef struct {
	Name     string
	Category string
	Doc      string
	Inputs   []InputSpec
	Outputs  []string // output names, for docs; Infer decides the count
	Attrs    []AttrSpec

	// Promote casts every floating/integer tensor input to their common
	// dtype (PromoteTypes) before shape inference, so kernels see one dtype.
	Promote bool

	// Infer returns the shape and dtype of every output. For Dynamic ops it
	// returns the dtypes and the rank it can know; the kernel allocates.
	Infer func(in []Meta, a Attrs) ([]Meta, error)

	// View, when set, makes the op a view: no kernel runs, the output shares
	// the input's storage. ok=false falls back to a contiguous copy first.
	View func(t *Tensor, a Attrs) (v ViewSpec, ok bool, err error)

	// Backward returns the gradient of every input (nil where none), written
	// with other registry ops so it runs on any backend.
	Backward func(g *GradCtx) ([]*Tensor, error)

	// WGSL, when set, is a compute kernel a WebGPU backend without a
	// built-in kernel for the op runs instead of falling back to the CPU
	// (plugin ops carry one). Its binding layout: inputs as read-only
	// storage at bindings 0..nIn-1, outputs read-write after them, then a
	// uniform {n: u32 (elements of output 0), each int/float/bool attribute
	// in declaration order as one 32-bit value}; workgroups of 64 along x,
	// ceil(n/64) of them. See plugins-wasm/ABI.md.
	WGSL string

	// Pointwise, when set, is an elementwise op's arithmetic, from which
	// every backend derives its kernel (pointwise.go).
	Pointwise *Pointwise

	// GPUBody, when set, is the op's GPU kernel written once, as the
	// function of one output element, from which WebGPU and CUDA derive
	// their kernels (element_body.go); the CPU kernel is still written.
	GPUBody *ElementBody

	// Compose, when set, defines the op by other registry ops: every
	// backend runs those (no kernel of its own and no CPU fallback),
	// autograd records them so the op needs no Backward, and a traced graph
	// keeps the op as one node that replays through Compose. Infer still
	// checks the inputs first, so errors name this op.
	Compose func(in []*Tensor, a Attrs) ([]*Tensor, error)

	Random   bool // draws from the Philox stream: seed/offset attributes are filled by Call
	Dynamic  bool // output shapes depend on input values
	Internal bool // a helper for backward rules; not exposed as an SDK method

	Samples  []Sample
	TolScale float64 // multiplies the dtype tolerance (accumulating ops); 0 means 1

	// kernels remembers LookupKernelFor's answers per backend kind, so a
	// small op's dispatch skips the registry's lock and map (kernels.go).
	kernels [len(memoKinds)]atomic.Pointer[kernelMemo]
	// inline says Infer is a shared rule runKernel computes in place.
	inline inlineInfer
}

// ViewSpec is the layout of a view over the input's storage.
type ViewSpec struct {
	Shape   Shape
	Strides []int
	Offset  int
	// DType, when set, reinterprets the elements (view_as_real and
	// view_as_complex: a complex element is two of its real dtype's, so
	// shape, strides and offset are counted in the new dtype's elements).
	DType DType
}

// Differentiable reports whether the op has a backward rule, its own or,
// for a Compose op, its parts' (a part without one fails when a gradient is
// asked for, naming that part): a Compose op is differentiable in the
// inputs not marked NoGrad.
func (d *OpDef) Differentiable() bool {
	if d.Backward != nil {
		return true
	}
	if d.Compose == nil {
		return false
	}
	for _, in := range d.Inputs {
		if !in.NoGrad {
			return true
		}
	}
	return false
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*OpDef{}
	// registryView is a copy of registry that LookupOp reads without the
	// lock (every op call looks its name up); nil after a registration
	// until the next lookup copies it again.
	registryView atomic.Pointer[map[string]*OpDef]
)

// Register adds an op to the registry. It rejects duplicates and incomplete
// definitions so that a bad OpDef fails at start-up, not at first call.
func Register(def *OpDef) error {
	if def == nil || def.Name == "" {
		return fmt.Errorf("register: op has no name")
	}
	if def.Infer == nil && def.View == nil {
		return fmt.Errorf("register %s: neither Infer nor View is set", def.Name)
	}
	if def.Doc == "" {
		return fmt.Errorf("register %s: missing doc line", def.Name)
	}
	if err := checkPointwise(def); err != nil {
		return err
	}
	if err := checkElementBody(def); err != nil {
		return err
	}
	if def.Compose != nil && (def.Pointwise != nil || def.View != nil || def.Backward != nil || def.WGSL != "") {
		return fmt.Errorf("register %s: a Compose op is defined by other ops only: no Pointwise, View, Backward or WGSL", def.Name)
	}
	for i, in := range def.Inputs {
		if in.Variadic && i != len(def.Inputs)-1 {
			return fmt.Errorf("register %s: only the last input may be variadic", def.Name)
		}
	}
	if def.Random {
		def.Attrs = append(def.Attrs,
			AttrSpec{Name: "seed", Kind: AttrInt, Doc: "Philox key; drawn from the global generator when absent"},
			AttrSpec{Name: "offset", Kind: AttrInt, Doc: "Philox counter offset; drawn from the global generator when absent"})
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[def.Name]; dup {
		return fmt.Errorf("register %s: op already registered", def.Name)
	}
	if def.inline == inferOther {
		def.inline = inlineInferOf(def.Infer)
	}
	registry[def.Name] = def
	registryView.Store(nil)
	kernelsGen.Add(1) // a new op may be derivable where a lookup found nothing
	recordSite("", def.Name)
	return nil
}

// MustRegister is Register for package init functions: a malformed built-in
// op is a programming error and stops the program at start-up.
func MustRegister(defs ...*OpDef) {
	for _, d := range defs {
		if err := Register(d); err != nil {
			panic(err)
		}
	}
}

// LookupOp finds an op by name.
func LookupOp(name string) (*OpDef, bool) {
	if v := registryView.Load(); v != nil {
		d, ok := (*v)[name]
		return d, ok
	}
	registryMu.Lock() // the copy is stored under the lock Register takes, so it is never stale
	defer registryMu.Unlock()
	v := maps.Clone(registry)
	registryView.Store(&v)
	d, ok := registry[name]
	return d, ok
}

// Ops returns every registered op sorted by name.
func Ops() []*OpDef {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]*OpDef, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
