package onnx

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// runState is one run's values by name (tensors, sequences, optionals),
// the narrow types of tensors that have one (beyond the model's constants
// and inputs) and the host copies of integer tensors read so far (a run
// owns it; the Model is only read).
type runState struct {
	vals  map[string]Value
	types map[string]elemType
	ints  map[*core.Tensor][]int64
}

// elem is the element type of value name: its narrow type when it has
// one, else the type t's dtype stands for.
func (r *runState) elem(m *Model, name string, t *core.Tensor) elemType {
	if et, ok := r.types[name]; ok {
		return et
	}
	if et, ok := m.types[name]; ok {
		return et
	}
	if t == nil {
		return 0
	}
	return naturalType(t.DType())
}

// valueType is the element type of a value named name: a tensor's (as
// elem), 0 for a sequence or optional, whose tensors carry their own.
func (c *ctx) valueType(name string, v Value) elemType {
	if t, ok := v.(*core.Tensor); ok {
		return c.run.elem(c.m, name, t)
	}
	return 0
}

// hostInts reads an integer tensor's values, from the model's or the
// run's host copy when there is one.
func (r *runState) hostInts(m *Model, t *core.Tensor) ([]int64, error) {
	if v, ok := m.hostInts[t]; ok {
		return v, nil
	}
	if v, ok := r.ints[t]; ok {
		return v, nil
	}
	if t.DType().IsFloat() {
		return nil, fmt.Errorf("dtype %s is not an integer type", t.DType())
	}
	v, err := t.Int64s()
	if err != nil {
		return nil, err
	}
	r.ints[t] = v
	return v, nil
}

// Run runs the model on named inputs and returns every graph output by
// name. Inputs on another device are copied to the model's; symbolic
// dimensions are bound from the inputs and must agree across them. A
// model with sequence or optional inputs or outputs runs through
// RunValues instead.
func (m *Model) Run(inputs map[string]*core.Tensor) (map[string]*core.Tensor, error) {
	if err := m.tensorsOnly(); err != nil {
		return nil, err
	}
	ordered := make([]Value, len(m.Inputs))
	for i, in := range m.Inputs {
		if t := inputs[in.Name]; t != nil {
			ordered[i] = t
		}
	}
	named := make(map[string]Value, len(inputs))
	for name, t := range inputs {
		if !m.isInput(name) {
			return nil, fmt.Errorf("onnx: the model has no input %q (inputs: %s)", name, m.inputNames())
		}
		if _, isStrings := m.strConsts[name]; isStrings {
			return nil, fmt.Errorf("onnx: input %q overrides a string initializer, which Run does not carry: use Model.RunValues", name)
		}
		if t != nil {
			named[name] = t
		}
	}
	outs, err := m.run(ordered, named)
	if err != nil {
		return nil, err
	}
	ts, err := m.asTensors(outs)
	if err != nil {
		return nil, err
	}
	res := make(map[string]*core.Tensor, len(outs))
	for i, o := range m.Outputs {
		res[o.Name] = ts[i]
	}
	return res, nil
}

// Call runs the model on inputs in Inputs order and returns the outputs in
// Outputs order. It has the signature ir.Trace captures.
func (m *Model) Call(inputs []*core.Tensor) ([]*core.Tensor, error) {
	if err := m.tensorsOnly(); err != nil {
		return nil, err
	}
	if len(inputs) != len(m.Inputs) {
		return nil, fmt.Errorf("onnx: the model takes %d inputs (%s), got %d", len(m.Inputs), m.inputNames(), len(inputs))
	}
	ins := make([]Value, len(inputs))
	for i, t := range inputs {
		if t != nil {
			ins[i] = t
		}
	}
	outs, err := m.run(ins, nil)
	if err != nil {
		return nil, err
	}
	return m.asTensors(outs)
}

// asTensors is the outputs of a run as tensors; an undeclared output that
// turned out a sequence or an optional is refused, as tensorsOnly refuses
// a declared one.
func (m *Model) asTensors(outs []Value) ([]*core.Tensor, error) {
	ts := make([]*core.Tensor, len(outs))
	for i, v := range outs {
		t, ok := v.(*core.Tensor)
		if _, str := v.(*Strings); str {
			return nil, fmt.Errorf("onnx: output %q is %s, which Run, Call and the C ABI (so every SDK) do not carry yet: use Model.RunValues",
				m.Outputs[i].Name, describe(v))
		}
		if !ok {
			return nil, fmt.Errorf("onnx: output %q is %s, which Run, Call and onnx.run do not carry: use Model.RunValues (onnx.run_values through the C ABI's wt_call)",
				m.Outputs[i].Name, describe(v))
		}
		ts[i] = t
	}
	return ts, nil
}

func (m *Model) isInput(name string) bool {
	for _, in := range m.Inputs {
		if in.Name == name {
			return true
		}
	}
	return m.defaults[name]
}

func (m *Model) inputNames() string {
	names := make([]string, len(m.Inputs))
	for i, in := range m.Inputs {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

func (m *Model) run(inputs []Value, named map[string]Value) ([]Value, error) {
	st := &runState{vals: make(map[string]Value, len(m.consts)+len(m.strConsts)+len(m.nodes)), types: map[string]elemType{},
		ints: map[*core.Tensor][]int64{}}
	for name, t := range m.consts {
		st.vals[name] = t
	}
	for name, s := range m.strConsts {
		st.vals[name] = s
	}
	for name := range m.defaults { // an initializer a caller may override (RunValues checked its kind)
		switch v := named[name].(type) {
		case *core.Tensor:
			if err := checkHeld(v, m.types[name]); err != nil {
				return nil, fmt.Errorf("onnx: input %q: %w", name, err)
			}
			st.vals[name] = v.To(m.dev)
		case *Strings:
			if err := v.valid(); err != nil {
				return nil, fmt.Errorf("onnx: input %q: %w", name, err)
			}
			st.vals[name] = v
		}
	}
	bound := map[string]boundDim{}
	for i, info := range m.Inputs {
		if inputs[i] == nil {
			return nil, fmt.Errorf("onnx: input %q is missing", info.Name)
		}
		v, err := m.admit(info, inputs[i], bound)
		if err != nil {
			return nil, fmt.Errorf("onnx: input %q: %w", info.Name, err)
		}
		st.vals[info.Name] = v
	}
	rel := newReleaser(m, st)
	for i, n := range m.nodes {
		if err := m.exec(n, st); err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
		rel.made(n, st)
		for _, in := range n.reads() {
			if m.lastUse[in] == i && !m.outputSet[in] && m.consts[in] == nil && m.strConsts[in] == nil {
				rel.dead(st.vals[in])
				delete(st.vals, in)
			}
		}
	}
	outs := make([]Value, len(m.Outputs))
	for i, o := range m.Outputs {
		outs[i] = st.vals[o.Name]
		if outs[i] == nil {
			return nil, fmt.Errorf("onnx: output %q was not computed", o.Name)
		}
		if !conformsTo(o, o.typed, outs[i]) {
			return nil, fmt.Errorf("onnx: output %q: the model declares %s, the graph computed %s", o.Name, o.Kind, describe(outs[i]))
		}
		t, ok := outs[i].(*core.Tensor)
		if !ok {
			continue // a sequence's or optional's tensors keep the types they were computed with
		}
		if err := m.declared(o, st, &t); err != nil {
			return nil, fmt.Errorf("onnx: output %q: %w", o.Name, err)
		}
		outs[i] = t
	}
	return outs, nil
}

// declared returns an output of a narrow declared type as that type: a
// value computed without it (by operators that lost track of it) is
// converted as Cast would, and a uint64 is checked to fit the i64 that
// holds it (which reads it on the host).
func (m *Model) declared(o ValueInfo, st *runState, t **core.Tensor) error {
	if o.elem == 0 {
		return nil
	}
	if st.elem(m, o.Name, *t) != o.elem {
		y, err := castTo(*t, o.elem, true, "up")
		if err != nil {
			return err
		}
		*t = y
	}
	if o.elem != pb.TensorProto_UINT64 {
		return nil
	}
	v, err := (*t).Int64s()
	if err != nil {
		return err
	}
	for i, x := range v {
		if x < 0 {
			return fmt.Errorf("element %d is %d as i64, a UINT64 above 2^63-1, which the importer cannot return", i, uint64(x))
		}
	}
	return nil
}

// boundDim remembers which input first fixed a symbolic dimension.
type boundDim struct {
	size  int
	input string
}

func (info ValueInfo) check(t *core.Tensor, bound map[string]boundDim) error {
	if info.DType != core.Invalid && t.DType() != info.DType {
		return fmt.Errorf("dtype %s, the model declares %s", t.DType(), info.DType)
	}
	return info.checkShape(t.Shape(), bound)
}

// checkShape checks a value's shape against the declared dims, binding
// symbolic ones.
func (info ValueInfo) checkShape(shape core.Shape, bound map[string]boundDim) error {
	if info.Dims == nil {
		return nil
	}
	if len(shape) != len(info.Dims) {
		return fmt.Errorf("shape %v has rank %d, the model declares rank %d", shape, len(shape), len(info.Dims))
	}
	for i, d := range info.Dims {
		switch {
		case d.Param != "":
			if b, ok := bound[d.Param]; ok && b.size != shape[i] {
				return fmt.Errorf("dim %d (%s) is %d, but input %q set %s to %d", i, d.Param, shape[i], b.input, d.Param, b.size)
			}
			bound[d.Param] = boundDim{shape[i], info.Name}
		case d.Size >= 0 && int64(shape[i]) != d.Size:
			return fmt.Errorf("shape %v: dim %d is %d, the model declares %d", shape, i, shape[i], d.Size)
		}
	}
	return nil
}

// exec runs one node, checking what its operator returned. A tensor
// operator is given tensors only: a sequence or optional input is an
// error naming it.
func (m *Model) exec(n *node, st *runState) (err error) {
	defer func() {
		// An operator's own arithmetic on shapes must not take the caller
		// down on a malformed model: report it against the node instead.
		if r := recover(); r != nil {
			err = n.errorf("internal error: %v", r)
		}
	}()
	c := &ctx{n: n, m: m, run: st, ins: make([]*core.Tensor, len(n.inputs)), vals: make([]Value, len(n.inputs))}
	useStrings := n.givesStrings
	for i, name := range n.inputs {
		if name == "" {
			continue
		}
		v := st.vals[name]
		c.vals[i] = v
		switch v := v.(type) {
		case *core.Tensor:
			c.ins[i] = v
		case *Strings:
			if n.spec.values != nil {
				break
			}
			if n.strs == nil {
				return n.errorf("input %d (%q) is %s; %s does not take string tensors (these operators do: %s)",
					i, name, describe(v), n.pb.GetOpType(), strings.Join(stringOperators(), ", "))
			}
			useStrings = true
		default:
			if v != nil && n.spec.values == nil {
				return n.errorf("input %d (%q) is %s; %s takes tensors", i, name, describe(v), n.pb.GetOpType())
			}
		}
	}
	for i := len(n.outputs); i > 0; i-- {
		if n.outputs[i-1] != "" {
			c.nout = i
			break
		}
	}
	var outs []Value
	switch {
	case n.spec.values != nil:
		outs, err = n.spec.values(c)
	case n.strs != nil && (useStrings || n.spec.run == nil):
		outs, err = n.strs(c)
	default:
		var ts []*core.Tensor
		ts, err = n.spec.run(c)
		outs = make([]Value, len(ts))
		for i, t := range ts {
			if t != nil { // a nil *core.Tensor in a Value would not compare equal to nil
				outs[i] = t
			}
		}
	}
	if c.err != nil {
		return n.wrap(c.err)
	}
	if err != nil {
		return n.wrap(err)
	}
	if len(outs) < c.nout {
		return n.errorf("%d outputs are asked for, the importer computes %d", c.nout, len(outs))
	}
	for i, name := range n.outputs {
		if name == "" {
			continue
		}
		if outs[i] == nil {
			return n.errorf("output %d (%q) is not supported", i, name)
		}
		t, isTensor := outs[i].(*core.Tensor)
		if !isTensor {
			delete(st.types, name)
			st.vals[name] = outs[i]
			continue
		}
		if err := t.Err(); err != nil {
			return n.wrap(err)
		}
		et, err := c.narrowResult(i, &t)
		if err != nil {
			return n.wrap(err)
		}
		if et != 0 {
			st.types[name] = et
		} else {
			delete(st.types, name)
		}
		st.vals[name] = t
	}
	return nil
}

// typeSource is the input whose element type an operator's outputs have,
// where it is not the first.
var typeSource = map[string]int{"Where": 1, "OneHot": 2}

// movesValues are operators whose outputs are values of their inputs
// (moved, selected or repeated), so a narrow type needs no conforming.
var movesValues = map[string]bool{"Identity": true, "Reshape": true, "Flatten": true, "Squeeze": true,
	"Unsqueeze": true, "Transpose": true, "Concat": true, "Split": true, "Slice": true, "Gather": true,
	"GatherElements": true, "GatherND": true, "Expand": true, "Tile": true, "Where": true, "Max": true, "Min": true,
	"OptionalGetElement": true}

// narrowResult is the narrow type of output i, 0 when it has none: the
// one the operator set (Cast, CastLike, QuantizeLinear, If), or else that
// of its type-giving input when the output has the input's held dtype, in
// which case the result is conformed to it (a uint16 Add wraps at 2^16).
func (c *ctx) narrowResult(i int, out **core.Tensor) (elemType, error) {
	if i < len(c.types) && c.types[i] != 0 {
		if narrowOf(c.types[i]) == nil {
			return 0, nil
		}
		return c.types[i], nil
	}
	src := typeSource[c.n.pb.GetOpType()]
	var in *core.Tensor // not c.opt: a sequence operator's input may be no tensor, which is no error here
	if src < len(c.ins) {
		in = c.ins[src]
	}
	if in == nil || in.DType() != (*out).DType() {
		return 0, nil
	}
	et := c.inType(src)
	if narrowOf(et) == nil {
		return 0, nil
	}
	if !movesValues[c.n.pb.GetOpType()] {
		y, err := conform(*out, et)
		if err != nil {
			return 0, err
		}
		*out = y
	}
	return et, nil
}
