package onnx

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/core/safetensors"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// ExportOpset is the default-domain opset Export writes: 20, the first
// with Gelu, so gelu stays one node; onnxruntime runs it since 1.17.
const ExportOpset = 20

// exportIRVersion is the ONNX IR version that opset 20 needs.
const exportIRVersion = 9

// ExportOption configures Export.
type ExportOption func(*exportConfig)

type exportConfig struct {
	inputs, outputs []string
	name            string
}

// ExportNames names the graph's inputs and outputs in the model (default:
// input_0, ..., output_0, ...); a list may be shorter than the graph's,
// leaving the rest to the default.
func ExportNames(inputs, outputs []string) ExportOption {
	return func(c *exportConfig) { c.inputs, c.outputs = inputs, outputs }
}

// ExportGraphName is the GraphProto's name (default "webtensor").
func ExportGraphName(name string) ExportOption { return func(c *exportConfig) { c.name = name } }

// Export writes a traced graph (ir.Trace, Model.Compile) as a serialized
// ONNX model: inputs and outputs with the shapes and dtypes the graph was
// traced with, its constants as initializers, and each registry op as the
// ONNX operator or short chain of operators that computes the same thing
// (exportOps lists them). Fused nodes are written as the ops they fused.
// An op without an ONNX form, or a setting its ONNX form cannot express,
// is an error naming the node and the op; nothing is dropped silently.
func Export(g *ir.Graph, opts ...ExportOption) ([]byte, error) {
	mp, err := exportModel(g, opts...)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(mp)
}

func exportModel(g *ir.Graph, opts ...ExportOption) (*pb.ModelProto, error) {
	c := exportConfig{name: "webtensor"}
	for _, o := range opts {
		o(&c)
	}
	if g == nil {
		return nil, errors.New("onnx export: the graph is nil")
	}
	if len(c.inputs) > len(g.Inputs) || len(c.outputs) > len(g.Outputs) {
		return nil, fmt.Errorf("onnx export: %d input and %d output names for a graph of %d inputs and %d outputs",
			len(c.inputs), len(c.outputs), len(g.Inputs), len(g.Outputs))
	}
	e := &exporter{g: &pb.GraphProto{Name: proto.String(c.name)}, names: map[*ir.Value]string{}, used: map[string]bool{}}
	for i, v := range g.Inputs {
		name := fmt.Sprintf("input_%d", i)
		if i < len(c.inputs) {
			name = c.inputs[i]
		}
		if err := e.claim(name, v); err != nil {
			return nil, err
		}
		vi, err := valueInfoProto(name, v.DType, v.Shape)
		if err != nil {
			return nil, fmt.Errorf("onnx export: input %q: %w", name, err)
		}
		e.g.Input = append(e.g.Input, vi)
	}
	for i, n := range g.Nodes {
		if err := e.node(n); err != nil {
			return nil, fmt.Errorf("onnx export: node %d (%s): %w", i, n.Op, err)
		}
	}
	for i, v := range g.Outputs {
		name := fmt.Sprintf("output_%d", i)
		if i < len(c.outputs) {
			name = c.outputs[i]
		}
		if e.used[name] {
			return nil, fmt.Errorf("onnx export: output name %q is already used", name)
		}
		src, err := e.value(v)
		if err != nil {
			return nil, fmt.Errorf("onnx export: output %q: %w", name, err)
		}
		// Identity gives every output its own name, whether it is a node's
		// result, an input or a constant, and the same value twice.
		e.emit("Identity", []string{src}, []string{name})
		e.used[name] = true
		vi, err := valueInfoProto(name, v.DType, v.Shape)
		if err != nil {
			return nil, fmt.Errorf("onnx export: output %q: %w", name, err)
		}
		e.g.Output = append(e.g.Output, vi)
	}
	return &pb.ModelProto{
		IrVersion:    proto.Int64(exportIRVersion),
		ProducerName: proto.String("webtensor"),
		// The exporter writes what the importer reads back exactly.
		ProducerVersion: proto.String(core.Version),
		OpsetImport:     []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}},
		Graph:           e.g,
	}, nil
}

// exporter builds one GraphProto: names holds each value's name in it,
// used every name taken (inputs, values, initializers, temporaries).
type exporter struct {
	g     *pb.GraphProto
	names map[*ir.Value]string
	used  map[string]bool
	seq   int
}

func (e *exporter) claim(name string, v *ir.Value) error {
	if name == "" || e.used[name] {
		return fmt.Errorf("onnx export: input name %q is empty or used twice", name)
	}
	e.used[name] = true
	e.names[v] = name
	return nil
}

// fresh is a new name for a temporary value.
func (e *exporter) fresh(prefix string) string {
	for {
		e.seq++
		name := fmt.Sprintf("%s_%d", prefix, e.seq)
		if !e.used[name] {
			e.used[name] = true
			return name
		}
	}
}

// value is v's name in the graph; a constant becomes an initializer the
// first time it is read.
func (e *exporter) value(v *ir.Value) (string, error) {
	if v == nil {
		return "", nil
	}
	if name, ok := e.names[v]; ok {
		return name, nil
	}
	if v.Const == nil {
		return "", fmt.Errorf("value %%%d is read before any node computes it", v.ID)
	}
	name := e.fresh(fmt.Sprintf("const%d", v.ID))
	st, err := safetensors.FromTensor(v.Const)
	if err != nil {
		return "", fmt.Errorf("constant %%%d: %w", v.ID, err)
	}
	tp, err := tensorProto(name, st.DType, st.Shape, st.Data)
	if err != nil {
		return "", fmt.Errorf("constant %%%d: %w", v.ID, err)
	}
	e.g.Initializer = append(e.g.Initializer, tp)
	e.names[v] = name
	return name, nil
}

// output names a node's result value.
func (e *exporter) output(v *ir.Value) string {
	if name, ok := e.names[v]; ok {
		return name
	}
	name := e.fresh(fmt.Sprintf("v%d", v.ID))
	e.names[v] = name
	return name
}

func (e *exporter) emit(op string, ins, outs []string, attrs ...*pb.AttributeProto) {
	e.g.Node = append(e.g.Node, &pb.NodeProto{
		OpType: proto.String(op), Input: ins, Output: outs, Attribute: attrs,
		Name: proto.String(fmt.Sprintf("%s_%d", op, len(e.g.Node))),
	})
}

// emit1 emits a one-output node into a new temporary and returns its name.
func (e *exporter) emit1(op string, ins []string, attrs ...*pb.AttributeProto) string {
	out := e.fresh(op)
	e.emit(op, ins, []string{out}, attrs...)
	return out
}

// initializer adds a constant the exported ops need (shapes, axes, a
// scalar) and returns its name.
func (e *exporter) initializer(dt core.DType, shape core.Shape, raw []byte) (string, error) {
	name := e.fresh("k")
	tp, err := tensorProto(name, dt, shape, raw)
	if err != nil {
		return "", err
	}
	e.g.Initializer = append(e.g.Initializer, tp)
	return name, nil
}

// ints is a 1-D i64 initializer (Reshape's shape, Slice's bounds, ...).
func (e *exporter) ints(vals ...int64) (string, error) {
	st, err := safetensors.FromTensor(core.FromSlice(vals, core.Shape{len(vals)}, core.CPU))
	if err != nil {
		return "", err
	}
	return e.initializer(core.I64, st.Shape, st.Data)
}

// scalar is a rank-0 initializer of dtype dt.
func (e *exporter) scalar(v float64, dt core.DType) (string, error) {
	st, err := safetensors.FromTensor(core.Scalar(v, dt, core.CPU))
	if err != nil {
		return "", err
	}
	return e.initializer(dt, core.Shape{}, st.Data)
}

// as is v's name as dtype dt, through a Cast when it has another: ONNX
// operators take operands of one type where registry ops promote.
func (e *exporter) as(v *ir.Value, dt core.DType) (string, error) {
	name, err := e.value(v)
	if err != nil || v.DType == dt {
		return name, err
	}
	to, err := onnxType(dt)
	if err != nil {
		return "", err
	}
	return e.emit1("Cast", []string{name}, intAttr("to", int64(to))), nil
}

// node writes one graph node: fused ones as the ops they fused.
func (e *exporter) node(n *ir.Node) error {
	switch {
	case n.Fused != nil || len(n.Sub) > 0: // fused maps, and joined ops (attention with its transpose)
		for _, s := range n.Sub {
			if err := e.node(s); err != nil {
				return fmt.Errorf("fused %s: %w", s.Op, err)
			}
		}
		return nil
	case n.Body != nil:
		return errors.New("a loop has no ONNX form in the exporter (trace the model with the loop unrolled)")
	}
	f, ok := exportOps[n.Op]
	if !ok {
		return fmt.Errorf("op %q has no ONNX form in the exporter (it writes %d registry ops: onnx.ExportedOps)", n.Op, len(exportOps))
	}
	def, ok := core.LookupOp(n.Op)
	if !ok {
		return fmt.Errorf("op %q is not in the registry", n.Op)
	}
	return f(e, &exportNode{Node: n, attrs: withDefaults(def, n.Attrs)})
}

// withDefaults is a node's attributes with the registry's defaults for
// those the traced call left out (a trace records the caller's attributes).
func withDefaults(def *core.OpDef, a core.Attrs) core.Attrs {
	out := core.Attrs{}
	for _, s := range def.Attrs {
		if s.Default != nil {
			out[s.Name] = s.Default
		}
	}
	for k, v := range a {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// onnxType is the TensorProto element type of a dtype.
func onnxType(dt core.DType) (pb.TensorProto_DataType, error) {
	switch dt {
	case core.F32:
		return pb.TensorProto_FLOAT, nil
	case core.F64:
		return pb.TensorProto_DOUBLE, nil
	case core.F16:
		return pb.TensorProto_FLOAT16, nil
	case core.BF16:
		return pb.TensorProto_BFLOAT16, nil
	case core.I64:
		return pb.TensorProto_INT64, nil
	case core.I32:
		return pb.TensorProto_INT32, nil
	case core.U32:
		return pb.TensorProto_UINT32, nil
	case core.I16:
		return pb.TensorProto_INT16, nil
	case core.I8:
		return pb.TensorProto_INT8, nil
	case core.U8:
		return pb.TensorProto_UINT8, nil
	case core.U16:
		return pb.TensorProto_UINT16, nil
	case core.U64:
		return pb.TensorProto_UINT64, nil
	case core.Bool:
		return pb.TensorProto_BOOL, nil
	}
	return 0, fmt.Errorf("dtype %s has no ONNX element type", dt)
}

// tensorProto holds raw little-endian element bytes, the layout ONNX's
// raw_data and safetensors share (bool: one byte per element).
func tensorProto(name string, dt core.DType, shape core.Shape, raw []byte) (*pb.TensorProto, error) {
	t, err := onnxType(dt)
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(shape))
	for i, d := range shape {
		dims[i] = int64(d)
	}
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(t)), Dims: dims, RawData: raw}, nil
}

func valueInfoProto(name string, dt core.DType, shape core.Shape) (*pb.ValueInfoProto, error) {
	t, err := onnxType(dt)
	if err != nil {
		return nil, err
	}
	dims := make([]*pb.TensorShapeProto_Dimension, len(shape))
	for i, d := range shape {
		dims[i] = &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}}
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(t)), Shape: &pb.TensorShapeProto{Dim: dims}},
	}}}, nil
}

func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func floatAttr(name string, v float64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(float32(v))}
}

func stringAttr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func intsAttr(name string, v []int) *pb.AttributeProto {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: out}
}

// bound is an optional integer attribute (Slice's stop) as ONNX's int64
// bound: absent means the end of the axis.
func bound(a core.Attrs, name string) int64 {
	if v, ok := a.IntValue(name); ok {
		return int64(v)
	}
	return math.MaxInt64
}
