package onnx

import (
	"fmt"
	"math"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// The exporter's op table: each registry op the importer's operators
// produce, written as the ONNX operator (or short chain) that computes the
// same values. Views whose result shape is fixed by the trace (reshape,
// squeeze, unsqueeze, flatten) all become a Reshape to that shape.

// exportNode is a graph node with its attributes' defaults filled in.
type exportNode struct {
	*ir.Node
	attrs core.Attrs
}

type exportFunc func(e *exporter, n *exportNode) error

var exportOps = map[string]exportFunc{}

// ExportedOps lists the registry ops Export writes.
func ExportedOps() []string {
	names := make([]string, 0, len(exportOps))
	for n := range exportOps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// in is input i's name, cast to dt unless dt is Invalid.
func (e *exporter) in(n *exportNode, i int, dt core.DType) (string, error) {
	if i >= len(n.Inputs) {
		return "", nil
	}
	if dt == core.Invalid || n.Inputs[i] == nil {
		return e.value(n.Inputs[i])
	}
	return e.as(n.Inputs[i], dt)
}

// simple writes op over the node's inputs, each cast to castTo (Invalid:
// as they are), into the node's outputs.
func simple(op string, castTo func(n *exportNode) core.DType, attrs func(n *exportNode) ([]*pb.AttributeProto, error)) exportFunc {
	return func(e *exporter, n *exportNode) error {
		dt := core.Invalid
		if castTo != nil {
			dt = castTo(n)
		}
		ins := make([]string, len(n.Inputs))
		for i := range n.Inputs {
			name, err := e.in(n, i, dt)
			if err != nil {
				return err
			}
			ins[i] = name
		}
		for len(ins) > 0 && ins[len(ins)-1] == "" { // trailing absent optionals
			ins = ins[:len(ins)-1]
		}
		var at []*pb.AttributeProto
		if attrs != nil {
			var err error
			if at, err = attrs(n); err != nil {
				return err
			}
		}
		outs := make([]string, len(n.Outputs))
		for i, v := range n.Outputs {
			outs[i] = e.output(v)
		}
		e.emit(op, ins, outs, at...)
		return nil
	}
}

// outType casts operands to the result's dtype (arithmetic: add, matmul).
func outType(n *exportNode) core.DType { return n.Outputs[0].DType }

// commonType casts operands to their promoted dtype (comparisons).
func commonType(n *exportNode) core.DType {
	dt := n.Inputs[0].DType
	for _, v := range n.Inputs[1:] {
		dt = core.PromoteTypes(dt, v.DType)
	}
	return dt
}

func attrsOf(f func(a core.Attrs) []*pb.AttributeProto) func(n *exportNode) ([]*pb.AttributeProto, error) {
	return func(n *exportNode) ([]*pb.AttributeProto, error) { return f(n.attrs), nil }
}

func init() {
	for op, onnxOp := range map[string]string{
		"abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "reciprocal": "Reciprocal",
		"floor": "Floor", "ceil": "Ceil", "sign": "Sign", "sin": "Sin", "cos": "Cos", "tan": "Tan",
		"tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu", "erf": "Erf", "isnan": "IsNaN",
		"logical_not": "Not", "contiguous": "Identity",
	} {
		exportOps[op] = simple(onnxOp, nil, nil)
	}
	for op, onnxOp := range map[string]string{
		"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max", "minimum": "Min", "matmul": "MatMul",
	} {
		exportOps[op] = simple(onnxOp, outType, nil)
	}
	for op, onnxOp := range map[string]string{
		"eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual", "ge": "GreaterOrEqual",
		"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor",
	} {
		exportOps[op] = simple(onnxOp, commonType, nil)
	}
	exportOps["ne"] = exportNotEqual
	exportOps["where"] = exportWhere
	exportOps["pow"] = simple("Pow", nil, nil)
	exportOps["softmax"] = simple("Softmax", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intAttr("axis", int64(a.Int("axis")))}
	}))
	exportOps["log_softmax"] = simple("LogSoftmax", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intAttr("axis", int64(a.Int("axis")))}
	}))
	exportOps["gelu"] = simple("Gelu", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{stringAttr("approximate", a.String("approximate"))}
	}))
	exportOps["leaky_relu"] = simple("LeakyRelu", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{floatAttr("alpha", a.Float("negative_slope"))}
	}))
	exportOps["elu"] = simple("Elu", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{floatAttr("alpha", a.Float("alpha"))}
	}))
	exportOps["cast"] = simple("Cast", nil, func(n *exportNode) ([]*pb.AttributeProto, error) {
		t, err := onnxType(n.Outputs[0].DType)
		return []*pb.AttributeProto{intAttr("to", int64(t))}, err
	})
	exportOps["permute"] = simple("Transpose", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intsAttr("perm", a.Ints("dims"))}
	}))
	exportOps["transpose"] = exportTranspose
	exportOps["concat"] = simple("Concat", outType, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intAttr("axis", int64(a.Int("axis")))}
	}))
	exportOps["index_select"] = simple("Gather", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intAttr("axis", int64(a.Int("axis")))}
	}))
	exportOps["gather"] = simple("GatherElements", nil, attrsOf(func(a core.Attrs) []*pb.AttributeProto {
		return []*pb.AttributeProto{intAttr("axis", int64(a.Int("axis")))}
	}))
	for _, op := range []string{"reshape", "squeeze", "unsqueeze", "flatten"} {
		exportOps[op] = exportReshape
	}
	exportOps["expand"] = exportWithShape("Expand")
	exportOps["slice"] = exportSlice
	exportOps["split"] = exportSplit
	exportOps["sum"] = exportReduce("ReduceSum")
	exportOps["mean"] = exportReduce("ReduceMean")
	exportOps["amax"] = exportReduce("ReduceMax")
	exportOps["amin"] = exportReduce("ReduceMin")
	exportOps["layer_norm"] = exportLayerNorm
	exportOps["conv2d"] = exportConv
	exportOps["max_pool2d"] = exportPool("MaxPool")
	exportOps["avg_pool2d"] = exportPool("AveragePool")
	exportOps["clamp"] = exportClamp
	exportOps["rsqrt"] = func(e *exporter, n *exportNode) error {
		x, err := e.in(n, 0, core.Invalid)
		if err != nil {
			return err
		}
		e.emit("Reciprocal", []string{e.emit1("Sqrt", []string{x})}, []string{e.output(n.Outputs[0])})
		return nil
	}
	exportOps["square"] = func(e *exporter, n *exportNode) error {
		x, err := e.in(n, 0, core.Invalid)
		if err != nil {
			return err
		}
		e.emit("Mul", []string{x, x}, []string{e.output(n.Outputs[0])})
		return nil
	}
}

func exportNotEqual(e *exporter, n *exportNode) error {
	dt := commonType(n)
	a, err := e.in(n, 0, dt)
	if err != nil {
		return err
	}
	b, err := e.in(n, 1, dt)
	if err != nil {
		return err
	}
	e.emit("Not", []string{e.emit1("Equal", []string{a, b})}, []string{e.output(n.Outputs[0])})
	return nil
}

func exportWhere(e *exporter, n *exportNode) error {
	cond, err := e.in(n, 0, core.Bool)
	if err != nil {
		return err
	}
	dt := n.Outputs[0].DType
	a, err := e.in(n, 1, dt)
	if err != nil {
		return err
	}
	b, err := e.in(n, 2, dt)
	if err != nil {
		return err
	}
	e.emit("Where", []string{cond, a, b}, []string{e.output(n.Outputs[0])})
	return nil
}

func exportTranspose(e *exporter, n *exportNode) error {
	rank := len(n.Inputs[0].Shape)
	d0, err := core.NormAxis(n.attrs.Int("dim0"), rank)
	if err != nil {
		return err
	}
	d1, err := core.NormAxis(n.attrs.Int("dim1"), rank)
	if err != nil {
		return err
	}
	perm := make([]int, rank)
	for i := range perm {
		perm[i] = i
	}
	perm[d0], perm[d1] = perm[d1], perm[d0]
	x, err := e.in(n, 0, core.Invalid)
	if err != nil {
		return err
	}
	e.emit("Transpose", []string{x}, []string{e.output(n.Outputs[0])}, intsAttr("perm", perm))
	return nil
}

// exportWithShape writes op(x, the output's shape): the traced shape is
// fixed, so -1 and the like are already resolved.
func exportWithShape(op string) exportFunc {
	return func(e *exporter, n *exportNode) error {
		x, err := e.in(n, 0, core.Invalid)
		if err != nil {
			return err
		}
		shape := make([]int64, len(n.Outputs[0].Shape))
		for i, d := range n.Outputs[0].Shape {
			shape[i] = int64(d)
		}
		s, err := e.ints(shape...)
		if err != nil {
			return err
		}
		e.emit(op, []string{x, s}, []string{e.output(n.Outputs[0])})
		return nil
	}
}

// exportReshape is a Reshape to the output's shape; allowzero keeps a 0
// extent a 0 (ONNX otherwise reads 0 as "copy the input's dim").
func exportReshape(e *exporter, n *exportNode) error {
	if err := exportWithShape("Reshape")(e, n); err != nil {
		return err
	}
	last := e.g.Node[len(e.g.Node)-1]
	last.Attribute = append(last.Attribute, intAttr("allowzero", 1))
	return nil
}

func exportSlice(e *exporter, n *exportNode) error {
	x, err := e.in(n, 0, core.Invalid)
	if err != nil {
		return err
	}
	bounds := [][]int64{{int64(n.attrs.Int("start"))}, {bound(n.attrs, "stop")}, {int64(n.attrs.Int("axis"))}, {int64(n.attrs.Int("step"))}}
	ins := []string{x}
	for _, b := range bounds {
		name, err := e.ints(b...)
		if err != nil {
			return err
		}
		ins = append(ins, name)
	}
	e.emit("Slice", ins, []string{e.output(n.Outputs[0])})
	return nil
}

// exportSplit writes Split with the parts' sizes read off the outputs'
// shapes (the registry's sizes or sections, resolved by the trace).
func exportSplit(e *exporter, n *exportNode) error {
	x, err := e.in(n, 0, core.Invalid)
	if err != nil {
		return err
	}
	axis, err := core.NormAxis(n.attrs.Int("axis"), len(n.Inputs[0].Shape))
	if err != nil {
		return err
	}
	sizes := make([]int64, len(n.Outputs))
	outs := make([]string, len(n.Outputs))
	for i, v := range n.Outputs {
		sizes[i], outs[i] = int64(v.Shape[axis]), e.output(v)
	}
	s, err := e.ints(sizes...)
	if err != nil {
		return err
	}
	e.emit("Split", []string{x, s}, outs, intAttr("axis", int64(axis)))
	return nil
}

// exportReduce writes a reduction with opset 18's axes input; the operand
// is first cast to the result's dtype (sum of bools and small integers is
// i64 in the registry, as in PyTorch).
func exportReduce(op string) exportFunc {
	return func(e *exporter, n *exportNode) error {
		x, err := e.in(n, 0, n.Outputs[0].DType)
		if err != nil {
			return err
		}
		ins := []string{x}
		if axes := n.attrs.Ints("axes"); axes != nil {
			vals := make([]int64, len(axes))
			for i, a := range axes {
				vals[i] = int64(a)
			}
			if len(vals) == 0 { // an empty list reduces over nothing
				e.emit("Identity", []string{x}, []string{e.output(n.Outputs[0])})
				return nil
			}
			name, err := e.ints(vals...)
			if err != nil {
				return err
			}
			ins = append(ins, name)
		}
		keep := int64(0)
		if n.attrs.Bool("keepdim") {
			keep = 1
		}
		e.emit(op, ins, []string{e.output(n.Outputs[0])}, intAttr("keepdims", keep))
		return nil
	}
}

// exportLayerNorm writes LayerNormalization, whose scale is required: a
// layer norm without a weight gets ones.
func exportLayerNorm(e *exporter, n *exportNode) error {
	x, err := e.in(n, 0, core.Invalid)
	if err != nil {
		return err
	}
	norm := n.attrs.Ints("normalized_shape")
	ins := []string{x, "", ""}
	for i := 1; i <= 2; i++ {
		if ins[i], err = e.in(n, i, core.Invalid); err != nil {
			return err
		}
	}
	if ins[1] == "" {
		dt := n.Inputs[0].DType
		ones := core.Call1("full", core.Attrs{"shape": norm, "value": 1.0, "dtype": dt})
		if ins[1], err = e.constant(ones); err != nil {
			return err
		}
	}
	if ins[2] == "" {
		ins = ins[:2]
	}
	e.emit("LayerNormalization", ins, []string{e.output(n.Outputs[0])},
		intAttr("axis", int64(-len(norm))), floatAttr("epsilon", n.attrs.Float("eps")))
	return nil
}

// constant adds a tensor the exporter made (a layer norm's ones).
func (e *exporter) constant(t *core.Tensor) (string, error) {
	return e.value(&ir.Value{ID: -1, Shape: t.Shape(), DType: t.DType(), Const: t, Input: -1})
}

// pair widens a registry pair attribute ([k] or [kh, kw]) to two values.
func pair(v []int, name string) ([]int, error) {
	switch len(v) {
	case 1:
		return []int{v[0], v[0]}, nil
	case 2:
		return v, nil
	}
	return nil, fmt.Errorf("%s %v: want 1 or 2 values", name, v)
}

// pads2 is ONNX's [top, left, bottom, right] from symmetric [ph, pw].
func pads2(v []int) []int { return []int{v[0], v[1], v[0], v[1]} }

func exportConv(e *exporter, n *exportNode) error {
	stride, err := pair(n.attrs.Ints("stride"), "stride")
	if err != nil {
		return err
	}
	pad, err := pair(n.attrs.Ints("padding"), "padding")
	if err != nil {
		return err
	}
	dil, err := pair(n.attrs.Ints("dilation"), "dilation")
	if err != nil {
		return err
	}
	return simple("Conv", outType, func(*exportNode) ([]*pb.AttributeProto, error) {
		return []*pb.AttributeProto{intsAttr("strides", stride), intsAttr("pads", pads2(pad)), intsAttr("dilations", dil),
			intAttr("group", int64(n.attrs.Int("groups")))}, nil
	})(e, n)
}

func exportPool(op string) exportFunc {
	return func(e *exporter, n *exportNode) error {
		kernel, err := pair(n.attrs.Ints("kernel_size"), "kernel_size")
		if err != nil {
			return err
		}
		stride := kernel // the registry's default stride is the kernel
		if s := n.attrs.Ints("stride"); len(s) > 0 {
			if stride, err = pair(s, "stride"); err != nil {
				return err
			}
		}
		pad, err := pair(n.attrs.Ints("padding"), "padding")
		if err != nil {
			return err
		}
		ceil := int64(0)
		if n.attrs.Bool("ceil_mode") {
			ceil = 1
		}
		at := []*pb.AttributeProto{intsAttr("kernel_shape", kernel), intsAttr("strides", stride), intsAttr("pads", pads2(pad)),
			intAttr("ceil_mode", ceil)}
		switch op {
		case "MaxPool":
			dil, err := pair(n.attrs.Ints("dilation"), "dilation")
			if err != nil {
				return err
			}
			at = append(at, intsAttr("dilations", dil))
		case "AveragePool":
			if n.attrs.Has("divisor_override") {
				return fmt.Errorf("divisor_override %d has no ONNX form", n.attrs.Int("divisor_override"))
			}
			include := int64(0)
			if n.attrs.Bool("count_include_pad") {
				include = 1
			}
			at = append(at, intAttr("count_include_pad", include))
		}
		return simple(op, nil, func(*exportNode) ([]*pb.AttributeProto, error) { return at, nil })(e, n)
	}
}

// exportClamp writes Clip with min and max as scalars of the operand's
// dtype (absent bounds are left out).
func exportClamp(e *exporter, n *exportNode) error {
	x, err := e.in(n, 0, core.Invalid)
	if err != nil {
		return err
	}
	dt := n.Inputs[0].DType
	ins := []string{x, "", ""}
	for i, name := range []string{"min", "max"} {
		if !n.attrs.Has(name) {
			continue
		}
		v := n.attrs.Float(name)
		if !dt.IsFloat() && (v != math.Trunc(v) || math.IsInf(v, 0)) {
			return fmt.Errorf("clamp %s %v does not fit dtype %s", name, v, dt)
		}
		if ins[i+1], err = e.scalar(v, dt); err != nil {
			return err
		}
	}
	for len(ins) > 1 && ins[len(ins)-1] == "" {
		ins = ins[:len(ins)-1]
	}
	e.emit("Clip", ins, []string{e.output(n.Outputs[0])})
	return nil
}
