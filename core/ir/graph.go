package ir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Value is one tensor of a graph: a graph input, a constant captured from
// the traced code, or an output of a node.
type Value struct {
	ID    int
	Shape core.Shape
	DType core.DType
	// Const holds the tensor of a constant; nil otherwise.
	Const *core.Tensor
	// Input is the position of a graph input, -1 otherwise.
	Input int
	// Producer is the node that computes it (nil for inputs and constants),
	// Index which of its outputs.
	Producer *Node
	Index    int
}

// Node is one op call, or (Op "fused") a tree of elementwise ops run as
// one kernel: Fused is the tree over Inputs, Sub the original nodes (run
// instead where the device cannot fuse or gradients are needed), or (Op
// "loop") a counted loop: Body runs Attrs["n"] times on the carried values
// (the first len(Outputs) inputs) and the outer values it reads (the rest).
type Node struct {
	Op      string
	Attrs   core.Attrs
	Inputs  []*Value // nil entries: absent optional inputs
	Outputs []*Value
	Fused   *fusion.Expr
	// Also, on a fused producer with two outputs, is the second output's
	// tree over the same inputs (FusePairs).
	Also *fusion.Expr
	Sub  []*Node
	Body *Graph
}

// Graph is a captured computation: Inputs in order, Nodes in execution
// order, Outputs the values the function returned.
type Graph struct {
	Inputs  []*Value
	Nodes   []*Node
	Outputs []*Value
	// KeepIntermediates stops Run from releasing intermediate tensors after
	// their last use (see MemoryPlan).
	KeepIntermediates bool
	nextID            int
}

// useCounts counts the reads of each value by g's nodes, an output of the
// graph counting twice more: a pass that folds a value read once into its
// reader must never fold one the caller gets back.
func (g *Graph) useCounts() map[*Value]int {
	uses := map[*Value]int{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			uses[v]++
		}
	}
	for _, v := range g.Outputs {
		uses[v] += 2
	}
	return uses
}

func (g *Graph) newValue(shape core.Shape, dt core.DType) *Value {
	v := &Value{ID: g.nextID, Shape: shape, DType: dt, Input: -1}
	g.nextID++
	return v
}

// String prints the graph one node per line, with the node's kind after
// it unless it is dense, and a loop's body indented below the loop:
//
//	%3: f32[4 2] = matmul(%0, %1)
//	%4: f32[4 2] = add(%3, const2)  {alpha: 1}
//	%5: f32[4 2] = spmm(const6, const7, const8, %4)  # sparse
func (g *Graph) String() string {
	var b strings.Builder
	g.write(&b, "")
	return b.String()
}

func (g *Graph) write(b *strings.Builder, indent string) {
	name := func(v *Value) string {
		switch {
		case v == nil:
			return "_"
		case v.Input >= 0:
			return fmt.Sprintf("%%in%d", v.Input)
		case v.Const != nil:
			return fmt.Sprintf("const%d", v.ID)
		}
		return fmt.Sprintf("%%%d", v.ID)
	}
	typ := func(v *Value) string { return fmt.Sprintf("%s%v", v.DType, []int(v.Shape)) }
	for _, v := range g.Inputs {
		fmt.Fprintf(b, "%sinput %s: %s\n", indent, name(v), typ(v))
	}
	for _, n := range g.Nodes {
		outs := make([]string, len(n.Outputs))
		for i, o := range n.Outputs {
			outs[i] = name(o) + ": " + typ(o)
		}
		ins := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			ins[i] = name(in)
		}
		op := n.Op
		if n.Fused != nil {
			op = n.Op + "[" + exprString(n.Fused) + "]"
			if n.Also != nil {
				op = n.Op + "[" + exprString(n.Fused) + "; " + exprString(n.Also) + "]"
			}
		}
		kind := ""
		if k := n.Kind(); k != KindDense {
			kind = "  # " + string(k)
		}
		fmt.Fprintf(b, "%s%s = %s(%s)%s%s\n", indent, strings.Join(outs, ", "), op, strings.Join(ins, ", "), attrString(n.Attrs), kind)
		if n.Body != nil {
			n.Body.write(b, indent+"    ")
		}
	}
	outs := make([]string, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = name(o)
	}
	fmt.Fprintf(b, "%sreturn %s\n", indent, strings.Join(outs, ", "))
}

func attrString(a core.Attrs) string {
	if len(a) == 0 {
		return ""
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %v", k, a[k])
	}
	return "  {" + strings.Join(parts, ", ") + "}"
}

// Stats counts what a graph holds, for `webtensor ir show` and tests.
type Stats struct{ Nodes, Consts, Inputs, Outputs int }

// Stats of g.
func (g *Graph) Stats() Stats {
	s := Stats{Nodes: len(g.Nodes), Inputs: len(g.Inputs), Outputs: len(g.Outputs)}
	seen := map[*Value]bool{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && v.Const != nil && !seen[v] {
				seen[v] = true
				s.Consts++
			}
		}
	}
	return s
}

func exprString(e *fusion.Expr) string {
	if e.Op == fusion.Const {
		return fmt.Sprintf("%g", e.Value)
	}
	if e.Op == "" {
		return fmt.Sprintf("$%d", e.Arg)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = exprString(a)
	}
	return e.Op + "(" + strings.Join(args, ", ") + ")"
}
