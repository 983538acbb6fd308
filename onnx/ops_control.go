package onnx

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Control flow: If runs one of its two subgraphs, chosen by a condition
// read on the host, so a traced graph holds the branch taken (as
// ir.Trace specialises any Go branch). A branch may give sequences and
// optionals as well as tensors.

func init() {
	defValues([]string{"then_branch", "else_branch"}, ifOp, "If")
}

// subgraph is a control-flow body, checked and sorted at load like the
// main graph. It reads values of the graphs around it by name.
type subgraph struct {
	nodes   []*node
	consts  map[string]*core.Tensor
	strs    map[string]*Strings // string initializers and Constant nodes
	types   map[string]elemType // narrow types of consts
	inputs  []string            // a loop body's inputs, bound on each iteration
	outputs []string
	outInfo []ValueInfo // the outputs' declared types and shapes
	// outShaped tells a declared scalar (no Dims) from an undeclared shape
	outShaped []bool
}

// freeNames lists the values g reads but does not define (its inputs,
// initializers or nodes' outputs), through nested subgraphs too.
func freeNames(g *pb.GraphProto) []string {
	own := map[string]bool{"": true}
	for _, vi := range g.GetInput() {
		own[vi.GetName()] = true
	}
	for _, tp := range g.GetInitializer() {
		own[tp.GetName()] = true
	}
	for _, n := range g.GetNode() {
		for _, out := range n.GetOutput() {
			own[out] = true
		}
	}
	var free []string
	seen := map[string]bool{}
	use := func(name string) {
		if !own[name] && !seen[name] {
			seen[name] = true
			free = append(free, name)
		}
	}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			use(in)
		}
		for _, a := range n.GetAttribute() {
			if a.GetG() != nil {
				for _, name := range freeNames(a.GetG()) {
					use(name)
				}
			}
		}
	}
	for _, vi := range g.GetOutput() {
		use(vi.GetName())
	}
	return free
}

func buildSubgraph(g *pb.GraphProto, opset int64, dev core.Device) (*subgraph, []string, error) {
	if g == nil {
		return nil, nil, errors.New("holds no graph")
	}
	sub := &subgraph{consts: map[string]*core.Tensor{}, strs: map[string]*Strings{}, types: map[string]elemType{}}
	defined := map[string]bool{}
	for _, vi := range g.GetInput() { // a loop body's per-iteration values
		name := vi.GetName()
		if name == "" || defined[name] {
			return nil, nil, fmt.Errorf("subgraph input %q is unnamed or listed twice", name)
		}
		defined[name] = true
		sub.inputs = append(sub.inputs, name)
	}
	for _, tp := range g.GetInitializer() {
		v, err := decodeTensorValue(tp, dev, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("initializer %q: %w", tp.GetName(), err)
		}
		if defined[tp.GetName()] {
			return nil, nil, fmt.Errorf("initializer %q is also a subgraph input or defined twice", tp.GetName())
		}
		sub.addConst(tp.GetName(), v, elemType(tp.GetDataType()))
		defined[tp.GetName()] = true
	}
	free := freeNames(g)
	for _, name := range free {
		defined[name] = true
	}
	nodes, err := sortNodes(g.GetNode(), defined, opset, dev)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range nodes {
		if n.pb.GetOpType() != "Constant" {
			sub.nodes = append(sub.nodes, n)
			continue
		}
		v, et, err := constantValue(n, dev)
		if err != nil {
			return nil, nil, n.wrap(err)
		}
		sub.addConst(n.outputs[0], v, et)
	}
	for _, vi := range g.GetOutput() {
		info, err := valueInfo(vi)
		if err != nil {
			return nil, nil, fmt.Errorf("subgraph output %q: %w", vi.GetName(), err)
		}
		if !defined[info.Name] {
			return nil, nil, fmt.Errorf("subgraph output %q is produced by no node, input or initializer", info.Name)
		}
		sub.outputs = append(sub.outputs, info.Name)
		sub.outInfo = append(sub.outInfo, info)
		sub.outShaped = append(sub.outShaped, vi.GetType().GetTensorType().GetShape() != nil)
	}
	return sub, free, nil
}

func (g *subgraph) addConst(name string, v Value, et elemType) {
	switch v := v.(type) {
	case *core.Tensor:
		g.consts[name] = v
		g.noteType(name, et)
	case *Strings:
		g.strs[name] = v
	}
}

func (g *subgraph) noteType(name string, et elemType) {
	if narrowOf(et) != nil {
		g.types[name] = et
	}
}

// run executes the subgraph in the enclosing run's state: names are
// unique across a model's graphs, so its values sit beside the outer ones.
func (g *subgraph) run(m *Model, st *runState) ([]Value, error) {
	return g.runWith(m, st, nil, nil)
}

// runWith runs a body on values for its inputs (in order) with their
// element types (0 where a value has its dtype's natural type or is not a
// tensor).
func (g *subgraph) runWith(m *Model, st *runState, ins []Value, types []elemType) ([]Value, error) {
	if len(ins) != len(g.inputs) {
		return nil, fmt.Errorf("the subgraph takes %d inputs, given %d", len(g.inputs), len(ins))
	}
	for i, name := range g.inputs {
		st.vals[name] = ins[i]
		if i < len(types) && narrowOf(types[i]) != nil {
			st.types[name] = types[i]
		} else {
			delete(st.types, name)
		}
	}
	for name, t := range g.consts {
		st.vals[name] = t
	}
	for name, s := range g.strs {
		st.vals[name] = s
	}
	for name, et := range g.types {
		st.types[name] = et
	}
	for _, n := range g.nodes {
		for _, in := range n.reads() {
			if in != "" && st.vals[in] == nil {
				return nil, n.errorf("input %q is not available here", in)
			}
		}
		if err := m.exec(n, st); err != nil {
			return nil, err
		}
	}
	outs := make([]Value, len(g.outputs))
	for i, name := range g.outputs {
		if outs[i] = st.vals[name]; outs[i] == nil {
			return nil, fmt.Errorf("subgraph output %q was not computed", name)
		}
	}
	return outs, nil
}

func ifOp(c *ctx) ([]Value, error) {
	cond, ok := c.scalar(0)
	if !ok {
		c.fail("the condition is missing")
		return nil, nil
	}
	name := "else_branch"
	if cond != 0 {
		name = "then_branch"
	}
	g := c.n.branches[name]
	if g == nil {
		c.fail("attribute %q is missing", name)
		return nil, nil
	}

	outs, err := g.run(c.m, c.run)
	if err != nil {
		return nil, err
	}
	for i, name := range g.outputs { // the branch's tensors keep their narrow types
		if t, ok := outs[i].(*core.Tensor); ok {
			c.setType(i, c.run.elem(c.m, name, t))
		}
	}
	return outs, nil
}

// tensorsOf is values that must be tensors (a body's scan outputs, the
// inputs it scans), or an error naming what is not.
func tensorsOf(vals []Value, what string) ([]*core.Tensor, error) {
	ts := make([]*core.Tensor, len(vals))
	for i, v := range vals {
		t, ok := v.(*core.Tensor)
		if !ok || t == nil {
			return nil, fmt.Errorf("%s %d is %s, want a tensor", what, i, describe(v))
		}
		ts[i] = t
	}
	return ts, nil
}
