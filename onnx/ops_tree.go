package onnx

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// ai.onnx.ml's TreeEnsemble (opset 5). The trees are read at load into
// tables over one index space, the interior nodes then the leaves (a leaf
// leads to itself either way), and every sample walks every tree at once
// with registry ops: per level, the nodes' features, thresholds and
// children are gathered (index_select), the sample's feature picked
// (take_along_axis) and compared, and the next node chosen with where;
// as many levels as the deepest tree has. The leaves reached are then
// gathered as rows over the targets and aggregated over the trees. So it
// runs on every backend and traces; it holds samples * trees * targets
// values at the end.

func init() {
	mlOperators["TreeEnsemble"] = &opSpec{attrs: []string{"aggregate_function", "leaf_targetids", "leaf_weights",
		"membership_values", "n_targets", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
		"nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs", "nodes_truenodeids",
		"post_transform", "tree_roots"}, prepare: prepareTreeEnsemble, run: treeEnsemble}
}

// Node modes, as TreeEnsemble numbers them.
const (
	branchLEQ = iota
	branchLT
	branchGTE
	branchGT
	branchEQ
	branchNEQ
	branchMember
)

var branchNames = []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"}

// forest is a tree ensemble in tables: index i < interior is a node,
// above it leaf i-interior.
type forest struct {
	interior   int
	feature    []int64
	split      []float64
	mode       []int
	next       [2][]int64 // [0] the false branch, [1] the true one
	missTrue   []bool
	sets       [][]float64 // per index, the members of a BRANCH_MEMBER node
	roots      []int64
	depth      int
	leafWeight [][]float64 // per leaf, its weight for each target
	leafHas    [][]bool    // whether the leaf gives that target a value
	targets    int
	aggregate  string // AVERAGE, SUM, MIN, MAX
	post       string // NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO
	base       []float64
}

func prepareTreeEnsemble(n *node) error {
	a := &mlAttrs{n: n}
	feature, trueIDs, falseIDs := a.ints("nodes_featureids", true), a.ints("nodes_truenodeids", true), a.ints("nodes_falsenodeids", true)
	trueLeaf, falseLeaf, missing := a.ints("nodes_trueleafs", true), a.ints("nodes_falseleafs", true), a.ints("nodes_missing_value_tracks_true", false)
	roots, targetIDs := a.ints("tree_roots", true), a.ints("leaf_targetids", true)
	modes, splits, weights := a.tensor("nodes_modes", true), a.tensor("nodes_splits", true), a.tensor("leaf_weights", true)
	members := a.tensor("membership_values", false)
	agg, post, targets := a.integer("aggregate_function", 1), a.integer("post_transform", 0), a.integer("n_targets", -1)
	if a.err != nil {
		return a.err
	}
	f := &forest{interior: len(feature), roots: roots}
	if agg < 0 || agg > 3 {
		return fmt.Errorf("aggregate_function %d is not one of 0 (AVERAGE), 1 (SUM), 2 (MIN), 3 (MAX)", agg)
	}
	f.aggregate = []string{"AVERAGE", "SUM", "MIN", "MAX"}[agg]
	switch post {
	case 0, 1, 2, 3:
		f.post = []string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"}[post]
	case 4:
		return fmt.Errorf("post_transform 4 (PROBIT) is not supported (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO): the registry has no inverse error function")
	default:
		return fmt.Errorf("post_transform %d is not one of 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO), 4 (PROBIT)", post)
	}
	nn := len(feature)
	for i, l := range []int{len(trueIDs), len(falseIDs), len(trueLeaf), len(falseLeaf), len(modes), len(splits)} {
		if l != nn {
			name := []string{"nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs", "nodes_falseleafs", "nodes_modes", "nodes_splits"}[i]
			return fmt.Errorf("attribute %q has %d values for the %d nodes of nodes_featureids", name, l, nn)
		}
	}
	if missing != nil && len(missing) != nn {
		return fmt.Errorf("attribute \"nodes_missing_value_tracks_true\" has %d values for %d nodes", len(missing), nn)
	}
	if len(weights) != len(targetIDs) {
		return fmt.Errorf("leaf_weights has %d values and leaf_targetids %d: they pair up one to one", len(weights), len(targetIDs))
	}
	if targets < 1 {
		return fmt.Errorf("n_targets %d: want at least one target", targets)
	}
	f.targets = int(targets)
	nl := len(weights)
	all := nn + nl
	f.feature, f.split, f.mode = make([]int64, all), make([]float64, all), make([]int, all)
	f.next = [2][]int64{make([]int64, all), make([]int64, all)}
	f.missTrue, f.sets = make([]bool, all), make([][]float64, all)
	child := func(i int, ids, leafs []int64, which string) (int64, error) {
		id, leaf := ids[i], leafs[i] != 0
		limit, at := int64(nn), id
		if leaf {
			limit, at = int64(nl), id+int64(nn)
		}
		if id < 0 || id >= limit {
			return 0, fmt.Errorf("node %d's %s branch is %d, outside [0, %d)", i, which, id, limit)
		}
		return at, nil
	}
	memberAt := 0
	for i := range nn {
		m := int(modes[i])
		if float64(m) != modes[i] || m < branchLEQ || m > branchMember {
			return fmt.Errorf("nodes_modes[%d] is %v, not one of 0 to 6 (%v)", i, modes[i], branchNames)
		}
		if feature[i] < 0 {
			return fmt.Errorf("nodes_featureids[%d] is %d, want at least 0", i, feature[i])
		}
		f.mode[i], f.feature[i], f.split[i] = m, feature[i], splits[i]
		f.missTrue[i] = missing != nil && missing[i] != 0
		var err error
		if f.next[1][i], err = child(i, trueIDs, trueLeaf, "true"); err != nil {
			return err
		}
		if f.next[0][i], err = child(i, falseIDs, falseLeaf, "false"); err != nil {
			return err
		}
		if m == branchMember {
			// The sets follow the order of the BRANCH_MEMBER nodes, each
			// ended by a NaN.
			start := memberAt
			for memberAt < len(members) && !math.IsNaN(members[memberAt]) {
				memberAt++
			}
			if memberAt >= len(members) {
				return fmt.Errorf("membership_values %v ends before the set of node %d (a BRANCH_MEMBER node; each set ends with a NaN)", members, i)
			}
			f.sets[i] = members[start:memberAt]
			memberAt++
		}
	}
	if memberAt != len(members) {
		return fmt.Errorf("membership_values %v has more sets than the BRANCH_MEMBER nodes", members)
	}
	f.leafWeight, f.leafHas = make([][]float64, nl), make([][]bool, nl)
	for j := range nl {
		f.next[0][nn+j], f.next[1][nn+j] = int64(nn+j), int64(nn+j)
		t := targetIDs[j]
		if t < 0 || t >= targets {
			return fmt.Errorf("leaf_targetids[%d] is %d, outside [0, %d) (n_targets)", j, t, targets)
		}
		f.leafWeight[j], f.leafHas[j] = make([]float64, targets), make([]bool, targets)
		f.leafWeight[j][t], f.leafHas[j][t] = weights[j], true
	}
	if len(roots) == 0 {
		return fmt.Errorf("tree_roots is empty")
	}
	for i, r := range roots {
		if r < 0 || r >= int64(nn) {
			return fmt.Errorf("tree_roots[%d] is %d, outside [0, %d)", i, r, nn)
		}
	}
	if err := f.measure(); err != nil {
		return err
	}
	n.prepared = f
	return nil
}

// measure finds the deepest root-to-leaf path (the levels to walk),
// refusing cycles and trees that never reach a leaf.
func (f *forest) measure() error {
	depth := make([]int, len(f.feature)) // 0: not yet known
	state := make([]uint8, len(f.feature))
	var walk func(i int64) (int, error)
	walk = func(i int64) (int, error) {
		if int(i) >= f.interior {
			return 0, nil
		}
		switch state[i] {
		case 1:
			return 0, fmt.Errorf("node %d is its own descendant: the trees are not trees", i)
		case 2:
			return depth[i], nil
		}
		state[i] = 1
		d := 0
		for _, next := range []int64{f.next[0][i], f.next[1][i]} {
			c, err := walk(next)
			if err != nil {
				return 0, err
			}
			d = max(d, c+1)
		}
		state[i], depth[i] = 2, d
		return d, nil
	}
	for _, r := range f.roots {
		d, err := walk(r)
		if err != nil {
			return err
		}
		f.depth = max(f.depth, d)
	}
	return nil
}

func treeEnsemble(c *ctx) ([]*core.Tensor, error) {
	f := c.n.prepared.(*forest)
	x := c.in(0)
	if c.err != nil {
		return nil, nil
	}
	if x.Rank() != 2 || !x.DType().IsFloat() {
		c.fail("X is a %s tensor of shape %v, want [N, F] floats", x.DType(), x.Shape())
		return nil, nil
	}
	return oneOrFail(c, f.eval(c, x))
}

// eval walks every sample through every tree and aggregates the leaves'
// values: [N, targets] in x's type.
func (f *forest) eval(c *ctx, x *core.Tensor) *core.Tensor {
	n, features := x.Shape()[0], x.Shape()[1]
	for i := range f.interior {
		if f.feature[i] >= int64(features) {
			c.fail("nodes_featureids[%d] is %d, but X has %d features", i, f.feature[i], features)
			return nil
		}
	}
	dt, dev := x.DType(), x.Device()
	all, trees := len(f.feature), len(f.roots)
	table := func(v []int64) *core.Tensor { return core.FromSlice(v, core.Shape{all}, dev) }
	feature, yes, no := table(f.feature), table(f.next[1]), table(f.next[0])
	split := core.FromFloat64s(dt, core.Shape{all}, f.split, dev)
	used := map[int]bool{}
	var modes []int64
	anyMissing, widest := false, 0
	for i := range f.interior {
		used[f.mode[i]] = true
		anyMissing = anyMissing || f.missTrue[i]
		widest = max(widest, len(f.sets[i]))
	}
	for _, m := range f.mode {
		modes = append(modes, int64(m))
	}
	mode := table(modes)
	var missTrue, sets *core.Tensor
	if anyMissing {
		missTrue = core.FromSlice(f.missTrue, core.Shape{all}, dev)
	}
	if used[branchMember] {
		v := make([]float64, all*widest)
		for i := range v {
			v[i] = math.NaN()
		}
		for i, s := range f.sets {
			copy(v[i*widest:], s)
		}
		sets = core.FromFloat64s(dt, core.Shape{all, widest}, v, dev)
	}
	at := core.FromSlice(f.roots, core.Shape{1, trees}, dev)
	at = call("expand", core.Attrs{"shape": []int{n, trees}}, at)
	pick := func(t, flat *core.Tensor) *core.Tensor {
		return call("index_select", core.Attrs{"axis": 0}, t, flat).Reshape([]int{n, trees})
	}
	for range f.depth {
		flat := at.Reshape([]int{n * trees})
		v := call("take_along_axis", core.Attrs{"axis": 1}, x, pick(feature, flat))
		th := pick(split, flat)
		var cond *core.Tensor
		for m := branchLEQ; m <= branchMember; m++ {
			if !used[m] {
				continue
			}
			var hit *core.Tensor
			switch m {
			case branchLEQ:
				hit = call("le", nil, v, th)
			case branchLT:
				hit = call("lt", nil, v, th)
			case branchGTE:
				hit = call("ge", nil, v, th)
			case branchGT:
				hit = call("gt", nil, v, th)
			case branchEQ:
				hit = call("eq", nil, v, th)
			case branchNEQ:
				hit = call("ne", nil, v, th)
			case branchMember:
				members := call("index_select", core.Attrs{"axis": 0}, sets, flat).Reshape([]int{n, trees, widest})
				eq := call("eq", nil, v.Reshape([]int{n, trees, 1}), members).Cast(core.I32)
				hit = call("gt", nil, call("sum", core.Attrs{"axes": []int{2}}, eq), core.Scalar(0, core.I32, dev))
			}
			if cond == nil {
				cond = hit
			} else {
				cond = call("where", nil, call("eq", nil, pick(mode, flat), core.Scalar(float64(m), core.I64, dev)), hit, cond)
			}
		}
		if anyMissing {
			cond = call("logical_or", nil, cond, call("logical_and", nil, call("isnan", nil, v), pick(missTrue, flat)))
		}
		at = call("where", nil, cond, pick(yes, flat), pick(no, flat))
	}
	return f.aggregateLeaves(at, n, dt, dev)
}

// aggregateLeaves combines the leaves reached ([N, trees], indices past
// the interior nodes) over the trees, then adds the base values and
// applies the post transform.
func (f *forest) aggregateLeaves(at *core.Tensor, n int, dt core.DType, dev core.Device) *core.Tensor {
	trees, leaves := len(f.roots), len(f.leafWeight)
	w := make([]float64, 0, leaves*f.targets)
	has := make([]bool, 0, leaves*f.targets)
	for j := range leaves {
		w, has = append(w, f.leafWeight[j]...), append(has, f.leafHas[j]...)
	}
	leaf := call("sub", nil, at, core.Scalar(float64(f.interior), core.I64, dev)).Reshape([]int{n * trees})
	rows := call("index_select", core.Attrs{"axis": 0}, core.FromFloat64s(dt, core.Shape{leaves, f.targets}, w, dev), leaf)
	rows = rows.Reshape([]int{n, trees, f.targets})
	var y *core.Tensor
	switch f.aggregate {
	case "SUM", "AVERAGE":
		y = call("sum", core.Attrs{"axes": []int{1}}, rows)
		if f.aggregate == "AVERAGE" {
			y = call("div", nil, y, like(y, float64(trees)))
		}
	default:
		// Targets no leaf reached keep the start value, the type's
		// largest (MIN) or lowest (MAX) finite value, as ONNX's reference does.
		present := call("index_select", core.Attrs{"axis": 0}, core.FromSlice(has, core.Shape{leaves, f.targets}, dev), leaf)
		present = present.Reshape([]int{n, trees, f.targets})
		op, fill := "min", maxFinite(dt)
		if f.aggregate == "MAX" {
			op, fill = "max", -fill
		}
		y = call(op, core.Attrs{"axes": []int{1}}, call("where", nil, present, rows, like(rows, fill)))
	}
	if f.base != nil {
		y = call("add", nil, y, core.FromFloat64s(dt, core.Shape{f.targets}, f.base, dev))
	}
	return postTransform(y, f.post)
}

// postTransform applies a post_transform (NONE, SOFTMAX, LOGISTIC,
// SOFTMAX_ZERO) to scores y, [N, targets].
func postTransform(y *core.Tensor, post string) *core.Tensor {
	switch post {
	case "SOFTMAX":
		y = call("softmax", core.Attrs{"axis": 1}, y)
	case "LOGISTIC":
		y = call("sigmoid", nil, y)
	case "SOFTMAX_ZERO":
		// Zeros stay zero and take no share, as onnxruntime's does.
		zero := call("eq", nil, y, like(y, 0))
		top := call("max", core.Attrs{"axes": []int{1}, "keepdim": true}, y)
		e := call("where", nil, zero, like(y, 0), call("exp", nil, call("sub", nil, y, top)))
		total := call("sum", core.Attrs{"axes": []int{1}, "keepdim": true}, e)
		y = call("div", nil, e, call("where", nil, call("eq", nil, total, like(total, 0)), like(total, 1), total))
	}
	return y
}

// maxFinite is the largest finite value of a float dtype.
func maxFinite(dt core.DType) float64 {
	switch dt {
	case core.F16:
		return 65504
	case core.BF16:
		return 3.3895313892515355e38
	case core.F64:
		return math.MaxFloat64
	}
	return math.MaxFloat32
}
