package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// MinOpset is the oldest default-domain opset the importer accepts. The
// operators follow their current definitions; those whose meaning changed
// after opset 7 without an attribute or input that gives the old form away
// (the old forms' attributes are refused by name) are listed in
// semanticsSince and refused in older models.
const MinOpset = 7

// Dim is one dimension of a declared input or output: a fixed size, or a
// symbolic one (Param, ONNX's dim_param) bound when the model runs. Size is
// -1 when the dimension is symbolic or not declared at all.
type Dim struct {
	Size  int64
	Param string
}

// ValueInfo describes a graph input or output: a tensor, or a sequence
// or optional of tensors that DType, Narrow and Dims describe (Kind).
type ValueInfo struct {
	Name  string
	Kind  Kind
	DType core.DType
	// Narrow names the declared ONNX element type ("UINT16", "INT4",
	// "FLOAT8E4M3FN", ...) when webtensor has no dtype for it: the value is
	// held widened in DType and carries only values of the narrow type (see
	// the package doc). Empty for every other type.
	Narrow string
	Dims   []Dim

	elem  elemType // the narrow type Narrow names, 0 when there is none
	typed bool     // the model declares the value's type (Kind means something)
}

// Model is an imported ONNX graph, ready to run on its device. A Model is
// safe for concurrent Run calls: running reads it and writes nothing.
type Model struct {
	Inputs  []ValueInfo // the inputs a caller supplies (initializers excluded)
	Outputs []ValueInfo
	Opset   int64 // the default domain's opset version

	dev       core.Device
	consts    map[string]*core.Tensor // initializers and Constant nodes
	strConsts map[string]*Strings     // those of them that are string tensors
	types     map[string]elemType     // the narrow type of each constant and input that has one
	defaults  map[string]bool         // graph inputs with an initializer: optional at run time
	nodes     []*node                 // topologically sorted
	lastUse   map[string]int          // index of the last node reading each value
	hostInts  map[*core.Tensor][]int64
	outputSet map[string]bool
}

// Option configures Load and LoadBytes.
type Option func(*config)

type config struct {
	dev    core.Device
	devSet bool
	dir    string
	owned  bool // AdoptBytes: tensors may adopt slices of the bytes, moved in place
}

// WithDevice places the model's weights, and runs it, on d (default: the
// default device, core.DefaultDevice).
func WithDevice(d core.Device) Option { return func(c *config) { c.dev, c.devSet = d, true } }

// AdoptBytes hands LoadBytes' data over to the model: on the CPU the
// weights' storage is data itself, each weight moved within it to its
// elements' alignment, where the default copies them out. data then
// belongs to the model: the caller must neither change nor reuse it, nor
// read it as a protobuf again. Load adopts the file's bytes it reads.
func AdoptBytes() Option { return func(c *config) { c.owned = true } }

// WithDir is the directory external data files are read from when a model
// is loaded from bytes (Load uses the model file's directory).
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// Load reads and imports the ONNX model at path. External data files are
// read relative to path's directory and may not leave it.
func Load(path string, opts ...Option) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return LoadBytes(data, append([]Option{WithDir(filepath.Dir(path)), AdoptBytes()}, opts...)...)
}

// LoadBytes imports a serialized ModelProto. Every node's operator and
// attributes are checked here, so a model that loads has no unsupported
// parts; shapes are checked when it runs.
func LoadBytes(data []byte, opts ...Option) (*Model, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if !c.devSet {
		c.dev = core.DefaultDevice()
	}
	mp, src, err := parseModel(data, c.owned)
	if err != nil {
		return nil, err
	}
	if c.dir != "" {
		root, err := os.OpenRoot(c.dir)
		if err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
		defer root.Close()
		src.root = root
	}
	m, err := build(mp, c.dev, src)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return m, nil
}

// Device is where the model's weights live and its operators run.
func (m *Model) Device() core.Device { return m.dev }

// Compile captures the model as an IR graph on example inputs (in Inputs
// order), simplifies it and fuses what the device can fuse. The graph is
// specialised to the examples' shapes, like ir.Trace.
func (m *Model) Compile(examples ...*core.Tensor) (*ir.Graph, error) {
	g, err := ir.Trace(m.Call, examples...)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := g.Optimize(); err != nil {
		return nil, err
	}
	if _, err := g.Fuse(m.dev); err != nil {
		return nil, err
	}
	return g, nil
}

func opsetOf(mp *pb.ModelProto) (int64, error) {
	opset := int64(-1)
	for _, o := range mp.GetOpsetImport() {
		switch o.GetDomain() {
		case "", "ai.onnx":
			opset = o.GetVersion()
		}
	}
	if opset < 0 {
		// A model of ai.onnx.ml operators alone (a LabelEncoder) may
		// import no default-domain opset; a default-domain node in it is
		// refused by newNode.
		return 0, nil
	}
	if opset < MinOpset {
		return 0, fmt.Errorf("opset %d is older than %d, the oldest supported (convert it with onnx.version_converter)", opset, MinOpset)
	}
	return opset, nil
}

func build(mp *pb.ModelProto, dev core.Device, src *tensorSource) (*Model, error) {
	g := mp.GetGraph()
	if g == nil {
		return nil, errors.New("the model has no graph")
	}
	opset, err := opsetOf(mp)
	if err != nil {
		return nil, err
	}
	m := &Model{Opset: opset, dev: dev, consts: map[string]*core.Tensor{}, strConsts: map[string]*Strings{}, types: map[string]elemType{}, defaults: map[string]bool{},
		hostInts: map[*core.Tensor][]int64{}, outputSet: map[string]bool{}}
	if len(g.GetSparseInitializer()) > 0 {
		return nil, errors.New("sparse initializers are not supported")
	}
	for _, tp := range g.GetInitializer() {
		name := tp.GetName()
		if name == "" {
			return nil, errors.New("an initializer has no name")
		}
		if m.isConst(name) {
			return nil, fmt.Errorf("initializer %q is defined twice", name)
		}
		v, err := decodeTensorValue(tp, dev, src)
		if err != nil {
			return nil, fmt.Errorf("initializer %q: %w", name, err)
		}
		m.addConst(name, v, elemType(tp.GetDataType()))
	}
	defined := map[string]bool{}
	for name := range m.consts {
		defined[name] = true
	}
	for name := range m.strConsts {
		defined[name] = true
	}
	for _, vi := range g.GetInput() {
		info, err := valueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph input %q: %w", vi.GetName(), err)
		}
		if m.isConst(info.Name) {
			m.defaults[info.Name] = true
			continue
		}
		if defined[info.Name] {
			return nil, fmt.Errorf("graph input %q is listed twice", info.Name)
		}
		defined[info.Name] = true
		m.noteType(info.Name, info.elem)
		m.Inputs = append(m.Inputs, info)
	}
	nodes, err := sortNodes(g.GetNode(), defined, opset, dev)
	if err != nil {
		return nil, err
	}
	for _, vi := range g.GetOutput() {
		info, err := valueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph output %q: %w", vi.GetName(), err)
		}
		if !defined[info.Name] {
			return nil, fmt.Errorf("graph output %q is produced by no node, input or initializer", info.Name)
		}
		m.Outputs = append(m.Outputs, info)
		m.outputSet[info.Name] = true
	}
	if len(m.Outputs) == 0 {
		return nil, errors.New("the graph has no outputs")
	}
	m.nodes = nodes
	if err := m.foldConstantNodes(); err != nil {
		return nil, err
	}
	m.fuseChains()
	m.lastUse = map[string]int{}
	for i, n := range m.nodes {
		for _, in := range n.reads() {
			m.lastUse[in] = i
		}
	}
	return m, nil
}

func (m *Model) isConst(name string) bool {
	return m.consts[name] != nil || m.strConsts[name] != nil
}

// addConst keeps an initializer's or Constant node's value (et its
// element type).
func (m *Model) addConst(name string, v Value, et elemType) {
	switch v := v.(type) {
	case *core.Tensor:
		m.consts[name] = v
		m.noteType(name, et)
		m.rememberInts(v)
	case *Strings:
		m.strConsts[name] = v
	}
}

// noteType records the narrow type of a constant or graph input.
func (m *Model) noteType(name string, et elemType) {
	if narrowOf(et) != nil {
		m.types[name] = et
	}
}

// rememberInts keeps a host copy of small integer initializers: shapes,
// axes and indices that operators read as numbers, so running the model
// does not download them from the device.
func (m *Model) rememberInts(t *core.Tensor) {
	if (t.DType() == core.I64 || t.DType() == core.I32) && t.Numel() <= 64 {
		if v, err := t.Int64s(); err == nil {
			m.hostInts[t] = v
		}
	}
}

func valueInfo(vi *pb.ValueInfoProto) (ValueInfo, error) {
	info := ValueInfo{Name: vi.GetName()}
	if info.Name == "" {
		return info, errors.New("a value has no name")
	}
	if vi.GetType() == nil {
		return info, nil // untyped: nothing to check against
	}
	tt, kind, err := typeOf(vi.GetType())
	if err != nil {
		return info, err
	}
	info.Kind, info.typed = kind, true
	if elemType(tt.GetElemType()) == pb.TensorProto_STRING {
		if kind != KindTensor {
			return info, fmt.Errorf("%s of strings is not supported (string tensors are held on the host; sequences and optionals hold numeric tensors)", kind)
		}
		info.Kind = KindStrings
	} else if tt.GetElemType() != 0 || kind == KindTensor { // a sequence's element type may be left open
		dt, err := heldType(tt.GetElemType())
		if err != nil {
			return info, err
		}
		info.DType = dt
	}
	if et := elemType(tt.GetElemType()); narrowOf(et) != nil {
		info.elem, info.Narrow = et, typeName(et)
	}
	if tt.GetShape() == nil {
		return info, nil
	}
	for _, d := range tt.GetShape().GetDim() {
		switch {
		case d.GetDimParam() != "":
			info.Dims = append(info.Dims, Dim{Size: -1, Param: d.GetDimParam()})
		case d.GetValue() == nil:
			info.Dims = append(info.Dims, Dim{Size: -1})
		default:
			if d.GetDimValue() < 0 {
				return info, fmt.Errorf("dim %d is negative", d.GetDimValue())
			}
			info.Dims = append(info.Dims, Dim{Size: d.GetDimValue()})
		}
	}
	return info, nil
}

// sortNodes checks every node (operator known, attributes understood, each
// output defined once) and orders them so each runs after what it reads:
// ONNX requires graphs sorted already, but exporters do not always comply,
// and a cycle or a missing input is an error naming the node.
func sortNodes(list []*pb.NodeProto, defined map[string]bool, opset int64, dev core.Device) ([]*node, error) {
	producer := map[string]int{}
	nodes := make([]*node, len(list))
	for i, np := range list {
		n, err := newNode(np, opset, dev)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
		for _, out := range n.outputs {
			if out == "" {
				continue
			}
			if defined[out] {
				return nil, n.errorf("output %q is already an input or initializer", out)
			}
			if j, dup := producer[out]; dup {
				return nil, n.errorf("output %q is also produced by node %d (%s)", out, j, nodes[j].pb.GetOpType())
			}
			producer[out] = i
		}
	}
	// Kahn's algorithm, keeping the file's order among ready nodes.
	waiting := make([]int, len(nodes))
	readers := map[string][]int{}
	for i, n := range nodes {
		for _, in := range n.reads() {
			if in == "" || defined[in] {
				continue
			}
			if _, ok := producer[in]; !ok {
				return nil, n.errorf("input %q is not a graph input, an initializer or any node's output", in)
			}
			waiting[i]++
			readers[in] = append(readers[in], i)
		}
	}
	var ready, order []int
	for i := range nodes {
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, out := range nodes[i].outputs {
			for _, r := range readers[out] {
				if waiting[r]--; waiting[r] == 0 {
					ready = append(ready, r)
				}
			}
		}
	}
	if len(order) < len(nodes) {
		var stuck []string
		for i, w := range waiting {
			if w > 0 && len(stuck) < 3 {
				stuck = append(stuck, nodes[i].label())
			}
		}
		return nil, fmt.Errorf("the graph has a cycle through %s", strings.Join(stuck, ", "))
	}
	sorted := make([]*node, len(order))
	for k, i := range order {
		sorted[k] = nodes[i]
		for _, out := range nodes[i].outputs {
			defined[out] = true
		}
	}
	return sorted, nil
}

// foldConstantNodes turns Constant nodes into tensors at load, so their
// values (often shapes and axes) are on the host and on the device once.
func (m *Model) foldConstantNodes() error {
	kept := m.nodes[:0]
	for _, n := range m.nodes {
		if n.pb.GetOpType() != "Constant" {
			kept = append(kept, n)
			continue
		}
		v, et, err := constantValue(n, m.dev)
		if err != nil {
			return n.wrap(err)
		}
		m.addConst(n.outputs[0], v, et)
	}
	m.nodes = kept
	return nil
}
