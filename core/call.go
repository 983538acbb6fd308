package core

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Call runs the registry op name on inputs with attributes and returns its
// outputs. It validates arity, dtypes, devices and attributes, infers output
// shapes, picks the backend of the inputs (falling back to the CPU kernel with
// a one-time warning when the backend lacks one) and records the call for
// autograd. It never panics.
func Call(name string, inputs []*Tensor, attrs Attrs) ([]*Tensor, error) {
	def, ok := LookupOp(name)
	if !ok {
		return nil, fmt.Errorf("unknown op %q%s", name, suggestOp(name))
	}
	return CallDef(def, inputs, attrs)
}

// Call1 is Call for single-output ops; the result carries any error.
func Call1(name string, attrs Attrs, inputs ...*Tensor) *Tensor {
	outs, err := Call(name, inputs, attrs)
	if err != nil {
		return errTensor(err)
	}
	if len(outs) != 1 {
		return errTensor(opErr(name, "returns %d outputs; use Call", len(outs)))
	}
	return outs[0]
}

func suggestOp(name string) string {
	var near []string
	for _, d := range Ops() {
		if strings.Contains(d.Name, name) || strings.Contains(name, d.Name) {
			near = append(near, d.Name)
		}
	}
	if len(near) == 0 || len(near) > 5 {
		return " (run `webtensor ops` for the list)"
	}
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(near, ", "))
}

// CallDef is Call with the OpDef already looked up.
func CallDef(def *OpDef, inputs []*Tensor, attrs Attrs) ([]*Tensor, error) {
	if o := observer.Load(); o != nil {
		return observedCall(*o, def, inputs, attrs)
	}
	return callDef(def, inputs, attrs)
}

func callDef(def *OpDef, inputs []*Tensor, attrs Attrs) (outs []*Tensor, err error) {
	defer catch(def.Name, &err)
	if wantsComplexForm(def, inputs, attrs) {
		// Before the tracer: a traced graph records the real ops it runs.
		return callComplex(def, inputs, attrs)
	}
	var traced []*Tensor // the inputs as given (promotion replaces them below)
	if tb := tracer.Load(); tb != nil {
		// Only calls made by the traced code are recorded, not the ones an
		// op makes inside its own implementation.
		if tb.depth.Add(1) == 1 {
			defer func() {
				if err == nil {
					tb.t.Record(def, traced, attrs, outs)
				}
			}()
		}
		defer tb.depth.Add(-1)
	}
	inputs, err = checkInputs(def, inputs, false)
	if err != nil {
		return nil, err
	}
	traced = inputs
	var a Attrs // nil for an op without attributes (most elementwise ops): no map per call
	if len(def.Attrs) > 0 || len(attrs) > 0 || def.Random {
		if a, err = normalizeAttrs(def.Name, def.Attrs, attrs); err != nil {
			return nil, err
		}
	}
	b, err := callBackend(def, inputs, a)
	if err != nil {
		return nil, err
	}
	if def.Promote {
		if inputs, err = promote(inputs); err != nil {
			return nil, wrapOp(def.Name, err)
		}
	}
	if def.Compose != nil {
		return callComposed(def, inputs, a)
	}
	if def.View != nil {
		out, err := callView(def, inputs[0], a)
		if err != nil {
			return nil, err
		}
		outs = []*Tensor{out}
	} else {
		if outs, err = runKernel(def, b, inputs, a); err != nil {
			return nil, err
		}
	}
	record(def, inputs, outs, a)
	return outs, nil
}

// checkInputs validates arity, nils, carried errors and dtypes, and pads
// trailing optional inputs with nil. complexForm admits complex inputs
// whatever the op's dtypes say (its complex form handles them).
func checkInputs(def *OpDef, inputs []*Tensor, complexForm bool) ([]*Tensor, error) {
	fixed := len(def.Inputs)
	variadic := fixed > 0 && def.Inputs[fixed-1].Variadic
	if variadic {
		fixed--
	}
	required := 0
	for i, s := range def.Inputs[:fixed] {
		if !s.Optional {
			required = i + 1
		}
	}
	switch {
	case variadic && len(inputs) < fixed+1:
		return nil, opErr(def.Name, "takes at least %d input(s) (%s), got %d", fixed+1, inputNames(def), len(inputs))
	case !variadic && (len(inputs) < required || len(inputs) > fixed):
		return nil, opErr(def.Name, "takes %d input(s) (%s), got %d", fixed, inputNames(def), len(inputs))
	}
	if !variadic && len(inputs) < fixed {
		inputs = append(slices.Clone(inputs), make([]*Tensor, fixed-len(inputs))...)
	}
	for i, t := range inputs {
		spec := def.Inputs[min(i, len(def.Inputs)-1)]
		if t == nil {
			if spec.Optional {
				continue
			}
			return nil, opErr(def.Name, "input %d (%s) is nil", i, spec.Name)
		}
		if t.err != nil {
			return nil, t.err
		}
		if t.storage == nil {
			return nil, opErr(def.Name, "input %d (%s): %v", i, spec.Name, ErrReleased)
		}
		if spec.DTypes != nil && !slices.Contains(spec.DTypes, t.dtype) && !(complexForm && t.dtype.IsComplex()) {
			return nil, opErr(def.Name, "input %d (%s) has dtype %s, want one of %v", i, spec.Name, t.dtype, spec.DTypes)
		}
	}
	return inputs, nil
}

func inputNames(def *OpDef) string {
	names := make([]string, len(def.Inputs))
	for i, s := range def.Inputs {
		names[i] = s.Name
		if s.Variadic {
			names[i] += "..."
		}
		if s.Optional {
			names[i] += "?"
		}
	}
	return strings.Join(names, ", ")
}

// callBackend finds the one backend all inputs live on; ops without inputs
// use their "device" attribute or the default device.
func callBackend(def *OpDef, inputs []*Tensor, a Attrs) (Backend, error) {
	var b Backend
	for i, t := range inputs {
		if t == nil {
			continue
		}
		if b == nil {
			b = t.backend
			continue
		}
		if t.backend.Device() != b.Device() {
			return nil, opErr(def.Name, "inputs on different devices: input 0 on %s, input %d on %s (move one with .To)", b.Device(), i, t.Device())
		}
	}
	if b != nil {
		return b, nil
	}
	if dev := a.String("device"); dev != "" {
		d, err := ParseDevice(dev)
		if err != nil {
			return nil, wrapOp(def.Name, err)
		}
		bk, err := BackendFor(d)
		return bk, wrapOp(def.Name, err)
	}
	bk, err := BackendFor(DefaultDevice())
	return bk, wrapOp(def.Name, err)
}

// promote casts inputs to their common dtype; inputs that already share it
// are returned as they are (no copy of the slice on the common path).
func promote(inputs []*Tensor) ([]*Tensor, error) {
	common, mixed := Invalid, false
	for _, t := range inputs {
		if t == nil {
			continue
		}
		if common == Invalid {
			common = t.dtype
		} else if t.dtype != common {
			d, err := Promote(common, t.dtype)
			if err != nil {
				return nil, err
			}
			common, mixed = d, true
		}
	}
	if !mixed {
		return inputs, nil
	}
	out := slices.Clone(inputs)
	for i, t := range out {
		if t != nil && t.dtype != common {
			out[i] = t.Cast(common)
			if err := out[i].Err(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// metas describes the inputs for Infer, in buf when they fit.
func metas(inputs []*Tensor, buf []Meta) []Meta {
	var m []Meta
	if len(inputs) <= cap(buf) {
		m = buf[:len(inputs)]
	} else {
		m = make([]Meta, len(inputs))
	}
	for i, t := range inputs {
		if t != nil {
			m[i] = t.Meta()
		}
	}
	return m
}

// MaxRank is the most dimensions a tensor may have, at the C ABI and in
// every op's result: kernels keep per-dim arrays of fixed size, and a
// chain of unsqueezes must not build what no SDK could take back.
const MaxRank = 64

func checkRank(op string, s Shape) error {
	if len(s) > MaxRank {
		return opErr(op, "the result would have %d dimensions; at most %d are supported", len(s), MaxRank)
	}
	return nil
}

// callComposed runs an op defined by other ops. Autograd records those
// ops, not this one: their backward rules are its gradient.
func callComposed(def *OpDef, inputs []*Tensor, a Attrs) ([]*Tensor, error) {
	var buf [4]Meta
	if _, err := def.Infer(metas(inputs, buf[:]), a); err != nil {
		return nil, wrapOp(def.Name, err)
	}
	outs, err := def.Compose(inputs, a)
	if err != nil {
		return nil, wrapOp(def.Name, err)
	}
	return outs, nil
}

func callView(def *OpDef, t *Tensor, a Attrs) (*Tensor, error) {
	v, ok, err := def.View(t, a)
	if err != nil {
		return nil, wrapOp(def.Name, err)
	}
	if err := checkRank(def.Name, v.Shape); err != nil {
		return nil, err
	}
	if !ok {
		c := t.Contiguous()
		if c.err != nil {
			return nil, c.err
		}
		if v, ok, err = def.View(c, a); err != nil || !ok {
			return nil, opErr(def.Name, "no view of a contiguous tensor (%v)", err)
		}
		t = c
	}
	out := NewView(t, v.Shape, v.Strides, v.Offset)
	if v.DType != Invalid {
		out.dtype = v.DType
	}
	return out, nil
}

func runKernel(def *OpDef, b Backend, inputs []*Tensor, a Attrs) ([]*Tensor, error) {
	kc := &kernelCall{KernelCall: KernelCall{Op: def, Inputs: inputs, Attrs: a, Backend: b}}
	ms, ok, err := kc.inferred.inline(def, inputs)
	if !ok {
		ms, err = inferOf(def, inputs, a)
	}
	if err != nil {
		return nil, wrapOp(def.Name, err)
	}
	for _, m := range ms {
		if err := checkRank(def.Name, m.Shape); err != nil {
			return nil, err
		}
	}
	if def.Random {
		fillRandomAttrs(a, ms)
	}
	kern := kernelOf(b, def)
	if kern == nil {
		return fallbackToCPU(def, b, inputs, a)
	}
	if !def.Dynamic {
		kc.Outputs = kc.one[:0:1] // most ops have one output: no second allocation for the slice
		if len(ms) > 1 {
			kc.Outputs = make([]*Tensor, 0, len(ms))
		}
		kc.Outputs = kc.Outputs[:len(ms)]
		for i, m := range ms {
			if kc.Outputs[i], err = Empty(b, m.Shape, m.DType); err != nil {
				return nil, wrapOp(def.Name, err)
			}
		}
	}
	if err := kern(&kc.KernelCall); err != nil {
		return nil, wrapOp(def.Name, err)
	}
	return kc.Outputs, nil
}

// kernelCall is a KernelCall with room for one output and, for the shared
// inference rules, the inferred output next to it: one allocation instead
// of three per elementwise op call.
type kernelCall struct {
	KernelCall
	one [1]*Tensor
	inferred
}

var warned sync.Map

// WarnWriter receives one-time warnings (CPU fallbacks); nil silences them.
var WarnWriter io.Writer = os.Stderr

func fallbackToCPU(def *OpDef, b Backend, inputs []*Tensor, a Attrs) ([]*Tensor, error) {
	if b.Device() == CPU {
		return nil, opErr(def.Name, "no CPU kernel registered (is backends/cpu imported?)")
	}
	cpu, err := BackendFor(CPU)
	if err != nil {
		return nil, wrapOp(def.Name, err)
	}
	countFallback(b.Device(), def.Name, FallbackCPU)
	if _, dup := warned.LoadOrStore(def.Name+"@"+b.Device().String(), true); !dup && WarnWriter != nil {
		fmt.Fprintf(WarnWriter, "webtensor: warning: %s has no %s kernel; running it on the CPU (core.Fallbacks counts these)\n", def.Name, b.Device())
	}
	host := make([]*Tensor, len(inputs))
	for i, t := range inputs {
		if t == nil {
			continue
		}
		if host[i], err = storageToCPU(t, cpu); err != nil {
			return nil, wrapOp(def.Name, err)
		}
	}
	outs, err := runKernel(def, cpu, host, a)
	if err != nil {
		return nil, err
	}
	for i, o := range outs {
		raw, err := o.Bytes()
		if err != nil {
			return nil, err
		}
		outs[i] = FromBytes(o.dtype, o.shape, raw, b.Device())
		if outs[i].err != nil {
			return nil, outs[i].err
		}
	}
	return outs, nil
}

// OpNames lists every op name, sorted.
func OpNames() []string {
	ops := Ops()
	out := make([]string, len(ops))
	for i, d := range ops {
		out[i] = d.Name
	}
	sort.Strings(out)
	return out
}

// storageToCPU copies a tensor's whole storage to the CPU and rebuilds the
// same view there. Copying the storage rather than the values keeps this free
// of any op call, so a backend without a "contiguous" kernel cannot recurse.
func storageToCPU(t *Tensor, cpu Backend) (*Tensor, error) {
	raw := make([]byte, t.storage.Len())
	if err := t.backend.Download(t.storage, 0, raw); err != nil {
		return nil, err
	}
	s, err := cpu.Upload(t.dtype, raw)
	if err != nil {
		return nil, err
	}
	return WrapStorage(cpu, s, t.shape, t.strides, t.offset, t.dtype), nil
}
