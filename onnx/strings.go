package onnx

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Strings is an ONNX string tensor. webtensor's tensors live on devices
// and have no string dtype, so the importer holds string tensors on the
// host, as it holds sequences: a shape and the elements in row-major
// order. ONNX's strings are byte strings (UTF-8 by convention); a Go
// string holds any bytes. Operators never change a Strings: each returns
// a new one.
type Strings struct {
	Shape core.Shape
	Data  []string
}

// NewStrings is a string tensor of shape over data (row-major), which
// must hold exactly shape's element count.
func NewStrings(shape core.Shape, data []string) (*Strings, error) {
	s := &Strings{Shape: shape, Data: data}
	return s, s.valid()
}

func (s *Strings) valid() error {
	n := 1
	for i, d := range s.Shape {
		if d < 0 {
			return fmt.Errorf("string tensor of shape %v: dim %d is negative", s.Shape, i)
		}
		n *= d
	}
	if n != len(s.Data) {
		return fmt.Errorf("string tensor of shape %v holds %d strings, want %d", s.Shape, len(s.Data), n)
	}
	return nil
}

// decodeStrings reads a STRING TensorProto: its elements live in
// string_data (never raw_data, ONNX's rule), one per element.
func decodeStrings(tp *pb.TensorProto) (*Strings, error) {
	shape, err := checkDims(tp.GetDims())
	if err != nil {
		return nil, err
	}
	switch {
	case tp.GetDataLocation() == pb.TensorProto_EXTERNAL, tp.RawData != nil:
		return nil, fmt.Errorf("a STRING tensor keeps its values in string_data, not raw or external data")
	case tp.GetSegment() != nil:
		return nil, fmt.Errorf("segmented tensors are not supported")
	}
	raw := tp.GetStringData()
	if len(raw) != shape.Numel() {
		return nil, fmt.Errorf("string_data has %d values, shape %v needs %d", len(raw), tp.GetDims(), shape.Numel())
	}
	data := make([]string, len(raw))
	for i, b := range raw {
		data[i] = string(b)
	}
	return &Strings{Shape: shape, Data: data}, nil
}

// decodeTensorValue decodes a TensorProto of any element type the importer
// holds: a *Strings for STRING, else a *core.Tensor on dev.
func decodeTensorValue(tp *pb.TensorProto, dev core.Device, src *tensorSource) (Value, error) {
	if elemType(tp.GetDataType()) == pb.TensorProto_STRING {
		return decodeStrings(tp)
	}
	return decodeTensor(tp, dev, src)
}

// positions is an i64 tensor on the CPU of shape counting from first:
// the stand-in for a string tensor's elements when an operator that
// moves values runs on them (moveStrings).
func positions(first int, shape core.Shape) *core.Tensor {
	p := make([]int64, shape.Numel())
	for i := range p {
		p[i] = int64(first + i)
	}
	return core.FromSlice(p, slices.Clone(shape), core.CPU)
}

// pick is the string tensor whose elements are pool's at the positions
// p holds.
func pick(pool []string, p *core.Tensor) (*Strings, error) {
	if err := p.Err(); err != nil {
		return nil, err
	}
	idx, err := p.Int64s()
	if err != nil {
		return nil, err
	}
	data := make([]string, len(idx))
	for i, k := range idx {
		if k < 0 || k >= int64(len(pool)) {
			return nil, fmt.Errorf("internal error: position %d of %d strings", k, len(pool))
		}
		data[i] = pool[k]
	}
	return &Strings{Shape: slices.Clone(p.Shape()), Data: data}, nil
}

// onCPU is the model as seen by an operator run on the host: what it
// makes (a Shape's output, a Range) is made on the CPU.
func (m *Model) onCPU() *Model {
	cp := *m
	cp.dev = core.CPU
	return &cp
}

// onPositions runs the node's tensor operator with each string input
// replaced by its positions (counting on across inputs, so the outputs
// say which input's element each one is) and every tensor input on the
// CPU. data says which inputs hold the values the operator moves: those
// must all be strings (the rest, shapes, axes, indices and conditions,
// must not be), so a mix is an error naming both inputs.
func onPositions(c *ctx, data func(i int) bool) (outs []*core.Tensor, pool []string) {
	host := &ctx{n: c.n, m: c.m.onCPU(), run: c.run, nout: c.nout,
		ins: make([]*core.Tensor, len(c.vals)), vals: make([]Value, len(c.vals))}
	firstStrings, firstNumbers := -1, -1
	for i, v := range c.vals {
		switch v := v.(type) {
		case *Strings:
			if !data(i) {
				c.fail("input %d (%q) is %s: %s takes numbers there", i, c.n.inputs[i], describe(v), c.n.pb.GetOpType())
				return nil, nil
			}
			if firstStrings < 0 {
				firstStrings = i
			}
			p := positions(len(pool), v.Shape)
			pool = append(pool, v.Data...)
			host.ins[i], host.vals[i] = p, p
		case *core.Tensor:
			if data(i) && firstNumbers < 0 {
				firstNumbers = i
			}
			t := v.To(core.CPU)
			if ints, ok := c.run.ints[v]; ok {
				c.run.ints[t] = ints
			}
			host.ins[i], host.vals[i] = t, t
		case nil:
		default:
			c.fail("input %d (%q) is %s, want a tensor", i, c.n.inputs[i], describe(v))
			return nil, nil
		}
	}
	if firstStrings >= 0 && firstNumbers >= 0 {
		c.fail("input %d (%q) is %s and input %d (%q) is %s: %s's values must all be strings or all numbers",
			firstStrings, c.n.inputs[firstStrings], describe(c.vals[firstStrings]),
			firstNumbers, c.n.inputs[firstNumbers], describe(c.vals[firstNumbers]), c.n.pb.GetOpType())
		return nil, nil
	}
	outs, err := c.n.spec.run(host)
	if host.err != nil {
		err = host.err
	}
	if err != nil {
		c.fail("%v", err)
		return nil, nil
	}
	return outs, pool
}

// moveStrings is the string form of an operator that only moves, picks
// or repeats its values (Reshape, Transpose, Gather, Where, ...): it runs
// on the strings' positions, so it has the tensor form's exact semantics
// and errors, and the positions it returns pick the strings.
func moveStrings(data func(i int) bool) func(c *ctx) ([]Value, error) {
	return func(c *ctx) ([]Value, error) {
		outs, pool := onPositions(c, data)
		if c.err != nil {
			return nil, nil
		}
		res := make([]Value, len(outs))
		for i, p := range outs {
			if p == nil {
				continue
			}
			s, err := pick(pool, p)
			if err != nil {
				return nil, err
			}
			res[i] = s
		}
		return res, nil
	}
}

// measureStrings is the string form of Shape and Size: the operator runs
// on the positions and its numeric outputs move to the model's device.
func measureStrings(c *ctx) ([]Value, error) {
	outs, _ := onPositions(c, func(i int) bool { return i == 0 })
	if c.err != nil {
		return nil, nil
	}
	res := make([]Value, len(outs))
	for i, t := range outs {
		y := t.To(c.m.dev)
		if ints, ok := c.run.ints[t]; ok {
			c.run.ints[y] = ints
		}
		res[i] = y
	}
	return res, nil
}

// Which inputs hold the values an operator moves (onPositions).
func firstInput(i int) bool    { return i == 0 }
func everyInput(int) bool      { return true }
func whereBranches(i int) bool { return i == 1 || i == 2 }

// stringForms are how operators run when a string tensor is involved:
// those defined for tensors run on positions (moveStrings), Cast and
// Equal compare or convert on the host, and the string operators
// (ops_string.go) exist only in this form. An operator without one
// refuses a string input, naming it.
var stringForms = map[string]func(c *ctx) ([]Value, error){
	"Reshape": moveStrings(firstInput), "Flatten": moveStrings(firstInput), "Squeeze": moveStrings(firstInput),
	"Unsqueeze": moveStrings(firstInput), "Transpose": moveStrings(firstInput), "Concat": moveStrings(everyInput),
	"Split": moveStrings(firstInput), "Slice": moveStrings(firstInput), "Gather": moveStrings(firstInput),
	"GatherElements": moveStrings(firstInput), "GatherND": moveStrings(firstInput), "Expand": moveStrings(firstInput),
	"Tile": moveStrings(firstInput), "Compress": moveStrings(firstInput), "ReverseSequence": moveStrings(firstInput),
	"Where": moveStrings(whereBranches),
	"Shape": measureStrings, "Size": measureStrings,
	"Equal": equalStrings, "Cast": castStrings, "CastLike": castStrings,
	"StringNormalizer": stringNormalizer, "StringConcat": stringConcat, "StringSplit": stringSplit,
	"RegexFullMatch": regexFullMatch, "LabelEncoder": labelEncoder,
}

// stringOperators lists the operators that take string tensors, for the
// error that refuses one elsewhere.
func stringOperators() []string {
	names := []string{"Identity", "If", "Loop", "Scan"}
	for n := range stringForms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// str is required input i, a string tensor.
func (c *ctx) str(i int) *Strings {
	v := c.value(i)
	if s, ok := v.(*Strings); ok {
		return s
	}
	if v == nil {
		c.fail("input %d (a string tensor) is required", i)
	} else {
		c.fail("input %d (%q) is %s, want a string tensor", i, c.n.inputs[i], describe(v))
	}
	return nil
}

// broadcastStrings pairs the elements of a and b under ONNX's
// (numpy's) broadcasting: the positions are broadcast by registry ops
// on the CPU, so the rules and their errors are the tensor ops'.
func broadcastStrings(a, b *Strings) (ia, ib []int64, shape core.Shape, err error) {
	pa, pb := positions(0, a.Shape), positions(0, b.Shape)
	zero := core.Scalar(0, core.I64, core.CPU)
	ta := call("add", nil, pa, call("mul", nil, pb, zero))
	tb := call("add", nil, pb, call("mul", nil, pa, zero))
	if err := ta.Err(); err != nil {
		return nil, nil, nil, err
	}
	if ia, err = ta.Int64s(); err != nil {
		return nil, nil, nil, err
	}
	if ib, err = tb.Int64s(); err != nil {
		return nil, nil, nil, err
	}
	return ia, ib, slices.Clone(ta.Shape()), nil
}
