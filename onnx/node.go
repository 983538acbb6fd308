package onnx

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// opSpec is how one ONNX operator runs: the attributes it understands
// (any other is an error at load, not a silently ignored setting) and a
// function from the node's inputs to its outputs: run for operators on
// tensors, values for those whose inputs or outputs may be sequences or
// optionals (control flow, the sequence and optional operators). Where
// string tensors are involved the operator's form in stringForms runs;
// the string operators have only that one (run and values nil). prepare,
// when set, checks and digests the node's attributes at load (a regular
// expression compiled, a lookup table built) into node.prepared.
type opSpec struct {
	attrs   []string
	run     func(c *ctx) ([]*core.Tensor, error)
	values  func(c *ctx) ([]Value, error)
	prepare func(n *node) error
}

// operators is the importer's operator table, filled by the ops_*.go
// files' init functions, one category each.
var operators = map[string]*opSpec{}

// def adds operators that share an implementation and attribute list.
func def(attrs []string, run func(c *ctx) ([]*core.Tensor, error), names ...string) {
	for _, n := range names {
		if _, dup := operators[n]; dup {
			panic("onnx: operator " + n + " defined twice")
		}
		operators[n] = &opSpec{attrs: attrs, run: run}
	}
}

// defValues adds operators that take or give sequences or optionals.
func defValues(attrs []string, run func(c *ctx) ([]Value, error), names ...string) {
	for _, n := range names {
		if _, dup := operators[n]; dup {
			panic("onnx: operator " + n + " defined twice")
		}
		operators[n] = &opSpec{attrs: attrs, values: run}
	}
}

// Operators lists the standard-domain operators the importer supports.
func Operators() []string {
	names := make([]string, 0, len(operators))
	for n := range operators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// mlOperatorList names the ai.onnx.ml operators the importer supports,
// for errors: "A, B and C".
func mlOperatorList() string {
	names := make([]string, 0, len(mlOperators))
	for n := range mlOperators {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// semanticsSince is the opset from which an operator means what the
// importer implements, where older versions differ silently: Softmax's
// family coerced the input to 2-D, TopK had k as an attribute, Resize had
// different inputs. (Squeeze and Unsqueeze took axes as an attribute
// before 13, which they read.)
var semanticsSince = map[string]int64{
	"Softmax": 13, "LogSoftmax": 13, "Hardmax": 13,
	"Resize": 11, "TopK": 10, "Clip": 11, "Pad": 11, "Slice": 10, "Split": 13,
	"BatchNormalization": 9,
}

// node is one NodeProto, checked at load.
type node struct {
	pb      *pb.NodeProto
	spec    *opSpec
	inputs  []string
	outputs []string
	attrs   map[string]*pb.AttributeProto
	opset   int64
	// branches are the subgraphs of control flow (If, Loop, Scan), built at load;
	// implicit lists the outer values they read, which the node depends
	// on as it does on its inputs.
	branches map[string]*subgraph
	implicit []string
	// strs is the operator's form for string tensors (stringForms), nil
	// when it takes none; givesStrings is set when the node makes strings
	// from numbers (a Cast to STRING), so that form runs without a string
	// input. prepared is what opSpec.prepare made of the attributes.
	strs         func(c *ctx) ([]Value, error)
	givesStrings bool
	prepared     any
}

// reads is every value the node depends on: its inputs and the outer
// values its subgraphs use.
func (n *node) reads() []string {
	if len(n.implicit) == 0 {
		return n.inputs
	}
	return append(append([]string{}, n.inputs...), n.implicit...)
}

func newNode(np *pb.NodeProto, opset int64, dev core.Device) (*node, error) {
	n := &node{pb: np, inputs: np.GetInput(), outputs: np.GetOutput(), attrs: map[string]*pb.AttributeProto{}, opset: opset}
	table, standard := operators, true
	switch np.GetDomain() {
	case "", "ai.onnx":
		if opset <= 0 {
			return nil, n.errorf("the model imports no default-domain opset")
		}
	case mlDomain:
		table, standard = mlOperators, false
	default:
		return nil, n.errorf("domain %q is not supported (only the standard ai.onnx domain and ai.onnx.ml's %s)", np.GetDomain(), mlOperatorList())
	}
	if np.GetOpType() == "Constant" && standard {
		n.spec = &opSpec{attrs: constantAttrs}
	} else if n.spec = table[np.GetOpType()]; n.spec == nil {
		return nil, n.errorf("operator %s is not supported", np.GetOpType())
	}
	n.strs = stringForms[np.GetOpType()]
	if since := semanticsSince[np.GetOpType()]; opset < since {
		return nil, n.errorf("%s before opset %d (the model imports opset %d) is not supported", np.GetOpType(), since, opset)
	}
	for _, a := range np.GetAttribute() {
		name := a.GetName()
		if a.GetRefAttrName() != "" {
			return nil, n.errorf("attribute %q refers to a function attribute, which only functions may", name)
		}
		if !slices.Contains(n.spec.attrs, name) {
			return nil, n.errorf("attribute %q is not supported (supported: %v)", name, n.spec.attrs)
		}
		if _, dup := n.attrs[name]; dup {
			return nil, n.errorf("attribute %q is given twice", name)
		}
		n.attrs[name] = a
	}
	if len(n.outputs) == 0 {
		return nil, n.errorf("the node has no outputs")
	}
	if to := n.attrs["to"]; np.GetOpType() == "Cast" && to != nil {
		n.givesStrings = elemType(to.GetI()) == pb.TensorProto_STRING
	}
	if n.spec.prepare != nil {
		if err := n.spec.prepare(n); err != nil {
			return nil, n.wrap(err)
		}
	}
	for _, a := range np.GetAttribute() { // in the file's order, so the first error is always the same
		name := a.GetName()
		if a.GetType() != pb.AttributeProto_GRAPH {
			continue
		}
		sub, free, err := buildSubgraph(a.GetG(), opset, dev)
		if err != nil {
			return nil, n.errorf("attribute %q: %v", name, err)
		}
		if np.GetOpType() == "If" && len(sub.inputs) > 0 {
			return nil, n.errorf("attribute %q: a branch takes no inputs, this one has %d", name, len(sub.inputs))
		}
		if n.branches == nil {
			n.branches = map[string]*subgraph{}
		}
		n.branches[name] = sub
		n.implicit = append(n.implicit, free...)
	}
	return n, nil
}

// label names a node in errors: its name when it has one, its position in
// the graph's outputs otherwise, and always its operator.
func (n *node) label() string {
	if name := n.pb.GetName(); name != "" {
		return fmt.Sprintf("node %q (%s)", name, n.pb.GetOpType())
	}
	if len(n.outputs) == 0 {
		return fmt.Sprintf("an unnamed node %s without outputs", n.pb.GetOpType())
	}
	return fmt.Sprintf("node %s producing %q", n.pb.GetOpType(), n.outputs[0])
}

func (n *node) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", n.label(), fmt.Sprintf(format, args...))
}

func (n *node) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", n.label(), err)
}

// ctx is one node's execution: its inputs, its attributes and a way to
// read small integer inputs (shapes, axes) as numbers. Attribute and input
// accessors record the first problem in err instead of returning it, so
// an operator reads its parameters in a few lines and the runner reports
// the problem with the node's name.
type ctx struct {
	n    *node
	m    *Model
	run  *runState
	ins  []*core.Tensor // the tensor inputs, nil where absent or not a tensor
	vals []Value        // every input, whatever its kind (nil where absent)
	nout int
	err  error
	// types are the element types an operator gives its outputs where
	// they do not follow from its inputs (Cast's "to"), by output index;
	// 0 where unset.
	types []elemType
}

// inType is the element type of input i: its narrow type (held widened)
// or the one its dtype stands for.
func (c *ctx) inType(i int) elemType {
	if i >= len(c.ins) || c.ins[i] == nil {
		return 0
	}
	return c.run.elem(c.m, c.n.inputs[i], c.ins[i])
}

// setType gives output i element type et.
func (c *ctx) setType(i int, et elemType) {
	for len(c.types) <= i {
		c.types = append(c.types, 0)
	}
	c.types[i] = et
}

func (c *ctx) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// in is required input i, a tensor.
func (c *ctx) in(i int) *core.Tensor {
	if i >= len(c.ins) || c.ins[i] == nil {
		err := fmt.Errorf("input %d is required", i)
		if v := c.value(i); v != nil {
			want := "a tensor"
			if _, isStrings := v.(*Strings); isStrings {
				want = "a numeric tensor"
			}
			err = fmt.Errorf("input %d (%q) is %s, want %s", i, c.n.inputs[i], describe(v), want)
		}
		if c.err == nil {
			c.err = err
		}
		return core.ErrTensor(err)
	}
	return c.ins[i]
}

// value is input i whatever its kind, nil when absent or named "".
func (c *ctx) value(i int) Value {
	if i >= len(c.vals) {
		return nil
	}
	return c.vals[i]
}

// seq is required input i, a sequence.
func (c *ctx) seq(i int) *Sequence {
	v := c.value(i)
	if s, ok := v.(*Sequence); ok {
		return s
	}
	if v == nil {
		c.fail("input %d (a sequence) is required", i)
	} else {
		c.fail("input %d (%q) is %s, want a sequence of tensors", i, c.n.inputs[i], describe(v))
	}
	return nil
}

// opt is optional input i, nil when absent or named "". A sequence or
// optional there (which only operators that take them are given) is an
// error, not an absent input.
func (c *ctx) opt(i int) *core.Tensor {
	if i >= len(c.ins) {
		return nil
	}
	if c.ins[i] == nil && c.vals[i] != nil {
		c.fail("input %d (%q) is %s, want a tensor", i, c.n.inputs[i], describe(c.vals[i]))
	}
	return c.ins[i]
}

// ints reads integer input i as numbers (from the host copy when there is
// one); ok is false when the input is absent.
func (c *ctx) ints(i int) (vals []int64, ok bool) {
	t := c.opt(i)
	if t == nil {
		return nil, false
	}
	v, err := c.run.hostInts(c.m, t)
	if err != nil {
		c.fail("input %d: %v", i, err)
		return nil, false
	}
	return v, true
}

// scalar reads input i, a one-element tensor, as a float64.
func (c *ctx) scalar(i int) (float64, bool) {
	t := c.opt(i)
	if t == nil {
		return 0, false
	}
	if t.Numel() != 1 {
		c.fail("input %d has shape %v, want a single value", i, t.Shape())
		return 0, false
	}
	v, err := t.Item()
	if err != nil {
		c.fail("input %d: %v", i, err)
		return 0, false
	}
	return v, true
}

func (c *ctx) attr(name string, want pb.AttributeProto_AttributeType) *pb.AttributeProto {
	a := c.n.attrs[name]
	if a == nil {
		return nil
	}
	if a.GetType() != want && a.GetType() != pb.AttributeProto_UNDEFINED {
		c.fail("attribute %q is a %s, want %s", name, a.GetType(), want)
		return nil
	}
	return a
}

func (c *ctx) has(name string) bool { return c.n.attrs[name] != nil }

func (c *ctx) attrInt(name string, def int64) int64 {
	if a := c.attr(name, pb.AttributeProto_INT); a != nil {
		return a.GetI()
	}
	return def
}

func (c *ctx) attrFloat(name string, def float64) float64 {
	if a := c.attr(name, pb.AttributeProto_FLOAT); a != nil {
		return float64(a.GetF())
	}
	return def
}

func (c *ctx) attrString(name, def string) string {
	if a := c.attr(name, pb.AttributeProto_STRING); a != nil {
		return string(a.GetS())
	}
	return def
}

func (c *ctx) attrInts(name string) ([]int64, bool) {
	if a := c.attr(name, pb.AttributeProto_INTS); a != nil {
		return a.GetInts(), true
	}
	return nil, false
}

// axis normalises an axis attribute or value against rank r.
func (c *ctx) axis(a int64, r int) int {
	if a < -int64(r) || a >= int64(max(r, 1)) {
		c.fail("axis %d is out of range for rank %d", a, r)
		return 0
	}
	if a < 0 {
		a += int64(r)
	}
	return int(a)
}

func (c *ctx) axes(list []int64, r int) []int {
	out := make([]int, len(list))
	for i, a := range list {
		out[i] = c.axis(a, r)
	}
	return out
}

// constantAttrs are the value forms of Constant; exactly one is given.
var constantAttrs = []string{"value", "value_float", "value_floats", "value_int", "value_ints", "sparse_value", "value_string", "value_strings"}

// constantValue evaluates a Constant node: a *core.Tensor, or a *Strings
// for a string value; et is the element type of a tensor value (a narrow
// one is held widened).
func constantValue(n *node, dev core.Device) (v Value, et elemType, err error) {
	if len(n.attrs) != 1 {
		return nil, 0, fmt.Errorf("a Constant takes exactly one value attribute, got %d", len(n.attrs))
	}
	var t *core.Tensor
	for name, a := range n.attrs {
		switch name {
		case "value":
			if a.GetT() == nil {
				return nil, 0, errors.New("attribute \"value\" holds no tensor")
			}
			v, err = decodeTensorValue(a.GetT(), dev, nil)
			return v, elemType(a.GetT().GetDataType()), err
		case "value_string":
			return &Strings{Shape: core.Shape{}, Data: []string{string(a.GetS())}}, 0, nil
		case "value_strings":
			data := make([]string, len(a.GetStrings()))
			for i, b := range a.GetStrings() {
				data[i] = string(b)
			}
			return &Strings{Shape: core.Shape{len(data)}, Data: data}, 0, nil
		case "value_float":
			t, err = constTensor(core.F32, nil, []float64{float64(a.GetF())}, dev)
		case "value_floats":
			v := make([]float64, len(a.GetFloats()))
			for i, f := range a.GetFloats() {
				v[i] = float64(f)
			}
			t, err = constTensor(core.F32, core.Shape{len(v)}, v, dev)
		case "value_int":
			t = core.FromSlice([]int64{a.GetI()}, core.Shape{}, dev)
			err = t.Err()
		case "value_ints":
			t = core.FromSlice(a.GetInts(), core.Shape{len(a.GetInts())}, dev)
			err = t.Err()
		default:
			return nil, 0, fmt.Errorf("attribute %q is not supported (webtensor has no sparse tensors)", name)
		}
	}
	return t, 0, err
}

func constTensor(d core.DType, shape core.Shape, v []float64, dev core.Device) (*core.Tensor, error) {
	t := core.FromFloat64s(d, shape, v, dev)
	return t, t.Err()
}
