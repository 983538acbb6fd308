package onnx

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// The ai.onnx.ml domain: LabelEncoder, the lookup that text
// pre-processing exported from scikit-learn ends in. Its table is built
// at load from the attributes, and the lookup runs on the host.

const mlDomain = "ai.onnx.ml"

// mlOperators is the ai.onnx.ml operator table.
var mlOperators = map[string]*opSpec{
	"LabelEncoder": {attrs: []string{"keys_strings", "keys_int64s", "keys_floats", "keys_tensor",
		"values_strings", "values_int64s", "values_floats", "values_tensor",
		"default_string", "default_int64", "default_float", "default_tensor"}, prepare: prepareLabels},
}

// labelKind is what a LabelEncoder's keys or values are.
type labelKind uint8

const (
	labelStrings labelKind = iota
	labelInts
	labelFloats
)

// labelList is a keys_* or values_* attribute: strings, or numbers (ints
// exact, floats as float64) of element type et.
type labelList struct {
	kind  labelKind
	et    elemType
	strs  []string
	ints  []int64
	float []float64
}

func (l labelList) len() int { return max(len(l.strs), len(l.ints), len(l.float)) }

// labelTable maps each key to the index of its value; float NaN keys
// match any NaN (nanAt, -1 when there is none). A repeated key maps to
// its last value.
type labelTable struct {
	keys    labelList
	values  labelList
	byStr   map[string]int
	byInt   map[int64]int
	byFloat map[float64]int
	nanAt   int
	def     labelList // one default value, of the values' kind
}

// prepareLabels reads the keys, values and default at load.
func prepareLabels(n *node) error {
	keys, err := labelAttr(n, "keys")
	if err != nil {
		return err
	}
	values, err := labelAttr(n, "values")
	if err != nil {
		return err
	}
	if keys.len() != values.len() {
		return fmt.Errorf("there are %d keys and %d values: they pair up one to one", keys.len(), values.len())
	}
	t := &labelTable{keys: keys, values: values, byStr: map[string]int{}, byInt: map[int64]int{}, byFloat: map[float64]int{}, nanAt: -1}
	for i := range keys.len() {
		switch keys.kind {
		case labelStrings:
			t.byStr[keys.strs[i]] = i
		case labelInts:
			t.byInt[keys.ints[i]] = i
		default:
			if math.IsNaN(keys.float[i]) {
				t.nanAt = i
			} else {
				t.byFloat[keys.float[i]] = i
			}
		}
	}
	if t.def, err = labelDefault(n, values); err != nil {
		return err
	}
	n.prepared = t
	return nil
}

// labelAttr reads the one keys_* or values_* attribute given.
func labelAttr(n *node, prefix string) (labelList, error) {
	var l labelList
	var given []string
	for _, suffix := range []string{"strings", "int64s", "floats", "tensor"} {
		a := n.attrs[prefix+"_"+suffix]
		if a == nil {
			continue
		}
		given = append(given, a.GetName())
		switch suffix {
		case "strings":
			l.kind, l.et = labelStrings, pb.TensorProto_STRING
			for _, b := range a.GetStrings() {
				l.strs = append(l.strs, string(b))
			}
		case "int64s":
			l.kind, l.et, l.ints = labelInts, pb.TensorProto_INT64, a.GetInts()
		case "floats":
			l.kind, l.et = labelFloats, pb.TensorProto_FLOAT
			for _, f := range a.GetFloats() {
				l.float = append(l.float, float64(f))
			}
		case "tensor":
			var err error
			if l, err = labelTensor(a.GetT()); err != nil {
				return l, fmt.Errorf("attribute %q: %w", a.GetName(), err)
			}
		}
	}
	if len(given) != 1 {
		return l, fmt.Errorf("exactly one %s_* attribute is required, got %v", prefix, given)
	}
	return l, nil
}

// labelTensor reads a keys_tensor, values_tensor or default_tensor.
func labelTensor(tp *pb.TensorProto) (labelList, error) {
	l := labelList{et: elemType(tp.GetDataType())}
	if tp == nil {
		return l, fmt.Errorf("holds no tensor")
	}
	v, err := decodeTensorValue(tp, core.CPU, nil)
	if err != nil {
		return l, err
	}
	switch v := v.(type) {
	case *Strings:
		l.kind, l.strs = labelStrings, v.Data
	case *core.Tensor:
		switch l.et {
		case pb.TensorProto_INT64, pb.TensorProto_INT32, pb.TensorProto_INT16:
			l.kind = labelInts
			l.ints, err = v.Int64s()
		case pb.TensorProto_FLOAT, pb.TensorProto_DOUBLE:
			l.kind = labelFloats
			l.float, err = v.Float64s()
		default:
			return l, fmt.Errorf("element type %s: LabelEncoder maps strings, INT64, INT32, INT16, FLOAT and DOUBLE", typeName(l.et))
		}
	}
	return l, err
}

// labelDefault is the value for keys not in the table: default_tensor or
// the default_* of the values' kind, else ONNX's defaults ("_Unused", -1,
// -0.0).
func labelDefault(n *node, values labelList) (labelList, error) {
	d := labelList{kind: values.kind, et: values.et}
	if a := n.attrs["default_tensor"]; a != nil {
		t, err := labelTensor(a.GetT())
		if err == nil && (t.kind != values.kind || t.len() != 1) {
			err = fmt.Errorf("is %d %s values, want one value of the values' type %s", t.len(), typeName(t.et), typeName(values.et))
		}
		if err != nil {
			return d, fmt.Errorf("attribute \"default_tensor\": %w", err)
		}
		return t, nil
	}
	switch values.kind {
	case labelStrings:
		d.strs = []string{"_Unused"}
		if a := n.attrs["default_string"]; a != nil {
			d.strs = []string{string(a.GetS())}
		}
	case labelInts:
		d.ints = []int64{-1}
		if a := n.attrs["default_int64"]; a != nil {
			d.ints = []int64{a.GetI()}
		}
	default:
		d.float = []float64{math.Copysign(0, -1)}
		if a := n.attrs["default_float"]; a != nil {
			d.float = []float64{float64(a.GetF())}
		}
	}
	return d, nil
}

// labelEncoder is LabelEncoder: each element of X looked up in the
// table, the default where it is not a key. X must be of the keys' kind.
func labelEncoder(c *ctx) ([]Value, error) {
	t := c.n.prepared.(*labelTable)
	var shape core.Shape
	var at []int // the value index of each element, -1 for the default
	switch x := c.value(0).(type) {
	case *Strings:
		if t.keys.kind != labelStrings {
			c.fail("input 0 (%q) is %s, the keys are %s", c.n.inputs[0], describe(x), typeName(t.keys.et))
			return nil, nil
		}
		shape, at = x.Shape, make([]int, len(x.Data))
		for i, s := range x.Data {
			if k, ok := t.byStr[s]; ok {
				at[i] = k
			} else {
				at[i] = -1
			}
		}
	case *core.Tensor:
		var err error
		if shape, at, err = t.lookupNumbers(x); err != nil {
			c.fail("input 0 (%q): %v", c.n.inputs[0], err)
			return nil, nil
		}
	default:
		c.str(0)
		return nil, nil
	}
	return []Value{t.gather(at, shape, c.m.dev)}, nil
}

func (t *labelTable) lookupNumbers(x *core.Tensor) (core.Shape, []int, error) {
	wantFloat := t.keys.kind == labelFloats
	if t.keys.kind == labelStrings || x.DType().IsFloat() != wantFloat || x.DType() == core.Bool {
		return nil, nil, fmt.Errorf("is a %s tensor, the keys are %s", x.DType(), typeName(t.keys.et))
	}
	at := make([]int, x.Numel())
	if !wantFloat {
		v, err := x.Int64s()
		if err != nil {
			return nil, nil, err
		}
		for i, n := range v {
			if k, ok := t.byInt[n]; ok {
				at[i] = k
			} else {
				at[i] = -1
			}
		}
		return x.Shape(), at, nil
	}
	v, err := x.Float64s()
	if err != nil {
		return nil, nil, err
	}
	for i, f := range v {
		k, ok := t.byFloat[f]
		switch {
		case math.IsNaN(f):
			at[i] = t.nanAt
		case ok:
			at[i] = k
		default:
			at[i] = -1
		}
	}
	return x.Shape(), at, nil
}

// gather is the output: the value at each index, the default at -1.
func (t *labelTable) gather(at []int, shape core.Shape, dev core.Device) Value {
	v, d := t.values, t.def
	switch v.kind {
	case labelStrings:
		out := make([]string, len(at))
		for i, k := range at {
			out[i] = d.strs[0]
			if k >= 0 {
				out[i] = v.strs[k]
			}
		}
		return &Strings{Shape: shape, Data: out}
	case labelInts:
		out := make([]int64, len(at))
		for i, k := range at {
			out[i] = d.ints[0]
			if k >= 0 {
				out[i] = v.ints[k]
			}
		}
		dt, _ := heldType(int32(v.et))
		return core.FromSlice(out, shape, dev).Cast(dt)
	}
	out := make([]float64, len(at))
	for i, k := range at {
		out[i] = d.float[0]
		if k >= 0 {
			out[i] = v.float[k]
		}
	}
	dt, _ := heldType(int32(v.et))
	return core.FromFloat64s(dt, shape, out, dev)
}

func init() {
	mlOperators["ArrayFeatureExtractor"] = &opSpec{run: arrayFeatureExtractor}
	mlOperators["Binarizer"] = &opSpec{attrs: []string{"threshold"}, run: binarizer}
}

// arrayFeatureExtractor picks columns (the last axis) at the indices,
// flattened; a 1-D input gives one row, as onnxruntime does.
func arrayFeatureExtractor(c *ctx) ([]*core.Tensor, error) {
	x, idx := c.in(0), c.in(1)
	if c.err != nil {
		return nil, nil
	}
	if x.Rank() == 0 {
		c.fail("X is a scalar, want at least one axis to pick from")
		return nil, nil
	}
	if x.Rank() == 1 {
		x = x.Reshape([]int{1, x.Numel()})
	}
	last := x.Shape()[x.Rank()-1]
	if v, ok := c.ints(1); ok {
		for i, j := range v {
			if j < 0 || j >= int64(last) {
				c.fail("Y's index %d is %d, outside [0, %d)", i, j, last)
				return nil, nil
			}
		}
	}
	return one(call("index_select", core.Attrs{"axis": x.Rank() - 1}, x, idx.Reshape([]int{-1})))
}

// binarizer is 1 where x exceeds threshold, else 0, in x's type.
func binarizer(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.err != nil {
		return nil, nil
	}
	above := call("gt", nil, x, like(x, c.attrFloat("threshold", 0)))
	return one(above.Cast(x.DType()))
}
