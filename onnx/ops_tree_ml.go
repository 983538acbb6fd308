package onnx

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// ai.onnx.ml's TreeEnsembleRegressor and TreeEnsembleClassifier (opsets 1
// and 3, the *_as_tensor attributes from 3), what skl2onnx and
// onnxmltools write for scikit-learn, XGBoost and LightGBM trees. Their
// nodes are listed by (tree id, node id) with a mode per node, LEAF
// included, and the leaves' values by (tree id, node id, target or
// class): at load they become the forest TreeEnsemble walks (ops_tree.go),
// so they run on registry ops the same way.
//
// Where onnxruntime and ONNX's reference implementation differ, the
// importer follows onnxruntime: a NaN reaching a BRANCH_NEQ node goes to
// the true branch (NaN != t) whatever nodes_missing_value_tracks_true
// says; the class a classifier outputs is the one of the highest score
// before the post transform; and the binary case (two labels, one class
// id in class_ids, as for gradient-boosted trees) scores [1-s, s] when no
// class weight is negative (so probabilities; no post transform applies)
// and otherwise [-s, s], or [sigmoid(-s), sigmoid(s)] under LOGISTIC, the
// label being the second one where s > 0.5, respectively s > 0. (Recent
// onnxruntime writes [s, -s] where s <= 0 without LOGISTIC, ml_common.h's
// "case 3", which makes the second score the higher whatever the label;
// the importer keeps [-s, s], as older onnxruntime releases do.) A
// classifier with two labels whose class_ids name both is scored as one
// with more classes, as the reference does.

func init() {
	common := []string{"base_values", "base_values_as_tensor", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
		"nodes_hitrates_as_tensor", "nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids", "nodes_treeids",
		"nodes_truenodeids", "nodes_values", "nodes_values_as_tensor", "post_transform"}
	mlOperators["TreeEnsembleRegressor"] = &opSpec{attrs: slices.Concat(common, []string{"aggregate_function", "n_targets",
		"target_ids", "target_nodeids", "target_treeids", "target_weights", "target_weights_as_tensor"}),
		prepare: prepareTreeRegressor, run: treeRegressor}
	mlOperators["TreeEnsembleClassifier"] = &opSpec{attrs: slices.Concat(common, []string{"class_ids", "class_nodeids",
		"class_treeids", "class_weights", "class_weights_as_tensor", "classlabels_int64s", "classlabels_strings"}),
		prepare: prepareTreeClassifier, values: treeClassify}
}

// leafMode marks a LEAF in nodes_modes, after the branch modes.
const leafMode = branchMember + 1

// mlAttrs reads a node's attributes, keeping the first error.
type mlAttrs struct {
	n      *node
	err    error
	double bool // some number attribute was a DOUBLE tensor
}

func (a *mlAttrs) fail(format string, args ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, args...)
	}
}

func (a *mlAttrs) get(name string, want pb.AttributeProto_AttributeType, required bool) *pb.AttributeProto {
	at := a.n.attrs[name]
	switch {
	case at == nil:
		if required {
			a.fail("attribute %q is required", name)
		}
		return nil
	case at.GetType() != want:
		a.fail("attribute %q is a %s, want %s", name, at.GetType(), want)
		return nil
	}
	return at
}

func (a *mlAttrs) ints(name string, required bool) []int64 {
	return a.get(name, pb.AttributeProto_INTS, required).GetInts()
}

// integer reads an INT attribute, def when it is absent.
func (a *mlAttrs) integer(name string, def int64) int64 {
	if at := a.get(name, pb.AttributeProto_INT, false); at != nil {
		return at.GetI()
	}
	return def
}

// tensor reads a numeric TENSOR attribute as float64s; nil when absent.
func (a *mlAttrs) tensor(name string, required bool) []float64 {
	at := a.get(name, pb.AttributeProto_TENSOR, required)
	if at == nil {
		return nil
	}
	if at.GetT() == nil {
		a.fail("attribute %q is a %s, want TENSOR", name, at.GetType())
		return nil
	}
	v, err := decodeTensorValue(at.GetT(), core.CPU, nil)
	if err != nil {
		a.fail("attribute %q: %v", name, err)
		return nil
	}
	t, ok := v.(*core.Tensor)
	if !ok {
		a.fail("attribute %q holds strings, want numbers", name)
		return nil
	}
	out, err := t.Float64s()
	if err != nil {
		a.fail("attribute %q: %v", name, err)
	}
	return out
}

func (a *mlAttrs) strs(name string, required bool) []string {
	var out []string
	for _, b := range a.get(name, pb.AttributeProto_STRINGS, required).GetStrings() {
		out = append(out, string(b))
	}
	return out
}

func (a *mlAttrs) str(name, def string) string {
	if at := a.get(name, pb.AttributeProto_STRING, false); at != nil {
		return string(at.GetS())
	}
	return def
}

// numbers reads name (FLOATS) or name_as_tensor (a FLOAT or DOUBLE
// tensor), at most one of them; nil when neither is given.
func (a *mlAttrs) numbers(name string, required bool) []float64 {
	fl, tn := a.n.attrs[name], a.n.attrs[name+"_as_tensor"]
	if fl != nil && tn != nil {
		a.fail("attributes %q and %q are both given: one of them, please", name, name+"_as_tensor")
		return nil
	}
	if tn != nil {
		at := a.get(name+"_as_tensor", pb.AttributeProto_TENSOR, false)
		if at == nil || at.GetT() == nil {
			a.fail("attribute %q holds no tensor", name+"_as_tensor")
			return nil
		}
		switch et := elemType(at.GetT().GetDataType()); et {
		case pb.TensorProto_DOUBLE:
			a.double = true
		case pb.TensorProto_FLOAT:
		default:
			a.fail("attribute %q is a %s tensor, want FLOAT or DOUBLE", name+"_as_tensor", typeName(et))
			return nil
		}
		v, err := decodeTensorValue(at.GetT(), core.CPU, nil)
		if err != nil {
			a.fail("attribute %q: %v", name+"_as_tensor", err)
			return nil
		}
		out, err := v.(*core.Tensor).Float64s()
		if err != nil {
			a.fail("attribute %q: %v", name+"_as_tensor", err)
		}
		return out
	}
	if fl == nil && required {
		a.fail("attribute %q (or %q) is required", name, name+"_as_tensor")
		return nil
	}
	var out []float64
	for _, f := range a.get(name, pb.AttributeProto_FLOATS, false).GetFloats() {
		out = append(out, float64(f))
	}
	return out
}

// oneOf reads a string attribute that must be one of names (the first is
// the default); its index.
func (a *mlAttrs) oneOf(name string, names ...string) int {
	v := a.str(name, names[0])
	i := slices.Index(names, v)
	if i < 0 {
		a.fail("attribute %q is %q, not one of %s", name, v, strings.Join(names, ", "))
		return 0
	}
	return i
}

// postTransformOf reads post_transform, refusing PROBIT.
func (a *mlAttrs) postTransformOf() string {
	posts := []string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}
	p := posts[a.oneOf("post_transform", posts...)]
	if p == "PROBIT" {
		a.fail("post_transform \"PROBIT\" is not supported (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO): the registry has no inverse error function")
	}
	return p
}

// leafValues are the leaves' values: for each entry k, the leaf
// (treeids[k], nodeids[k]) gives target ids[k] the value weights[k]; the
// attributes' names (target_* or class_*) for errors.
type leafValues struct {
	prefix                   string
	ids, nodeIDs, treeIDs    []int64
	weights                  []float64
	targets                  int
	targetsFrom, weightsName string
}

// treeKey is a node's (tree id, node id).
type treeKey struct{ tree, node int64 }

// readForest reads the nodes_* attributes and the leaves' values into a
// forest aggregating by aggregate (SUM, AVERAGE, MIN or MAX).
func readForest(a *mlAttrs, lv leafValues, aggregate string) (*forest, featureUse) {
	widest := featureUse{at: -1}
	treeIDs, nodeIDs, features := a.ints("nodes_treeids", true), a.ints("nodes_nodeids", true), a.ints("nodes_featureids", true)
	modeNames, values := a.strs("nodes_modes", true), a.numbers("nodes_values", false)
	trueIDs, falseIDs := a.ints("nodes_truenodeids", true), a.ints("nodes_falsenodeids", true)
	missing := a.ints("nodes_missing_value_tracks_true", false)
	a.numbers("nodes_hitrates", false) // read for its type; not used
	if a.err != nil {
		return nil, widest
	}
	nn := len(treeIDs)
	if nn == 0 {
		a.fail("attribute \"nodes_treeids\" is empty: the ensemble has no nodes")
		return nil, widest
	}
	if values == nil {
		values = make([]float64, nn)
	}
	lengths := []struct {
		name string
		n    int
	}{{"nodes_nodeids", len(nodeIDs)}, {"nodes_featureids", len(features)}, {"nodes_modes", len(modeNames)},
		{"nodes_values", len(values)}, {"nodes_truenodeids", len(trueIDs)}, {"nodes_falsenodeids", len(falseIDs)}}
	if missing != nil {
		lengths = append(lengths, struct {
			name string
			n    int
		}{"nodes_missing_value_tracks_true", len(missing)})
	}
	for _, l := range lengths {
		if l.n != nn {
			a.fail("attribute %q has %d values for the %d nodes of nodes_treeids", l.name, l.n, nn)
			return nil, widest
		}
	}
	// The forest's index of each node: the interior nodes first, in
	// order, then the leaves.
	modes, at := make([]int, nn), make([]int, nn)
	byKey := map[treeKey]int{}
	interior := 0
	for i, name := range modeNames {
		m := slices.Index(branchNames, name)
		switch {
		case name == "LEAF":
			m = leafMode
		case m < 0 || m == branchMember:
			a.fail("nodes_modes[%d] (tree %d, node %d) is %q, not one of %s or LEAF", i, treeIDs[i], nodeIDs[i], name,
				strings.Join(branchNames[:branchMember], ", "))
			return nil, widest
		default:
			at[i] = interior
			interior++
		}
		modes[i] = m
		k := treeKey{treeIDs[i], nodeIDs[i]}
		if j, dup := byKey[k]; dup {
			a.fail("node %d (nodes_treeids %d, nodes_nodeids %d) repeats node %d", i, k.tree, k.node, j)
			return nil, widest
		}
		byKey[k] = i
	}
	leaves := 0
	for i, m := range modes {
		if m == leafMode {
			at[i] = interior + leaves
			leaves++
		}
	}
	all := nn
	f := &forest{interior: interior, feature: make([]int64, all), split: make([]float64, all), mode: make([]int, all),
		next: [2][]int64{make([]int64, all), make([]int64, all)}, missTrue: make([]bool, all), sets: make([][]float64, all),
		targets: lv.targets, aggregate: aggregate}
	for i := range nn {
		j := at[i]
		if modes[i] == leafMode {
			f.next[0][j], f.next[1][j] = int64(j), int64(j)
			continue
		}
		if features[i] < 0 {
			a.fail("nodes_featureids[%d] (tree %d, node %d) is %d, want at least 0", i, treeIDs[i], nodeIDs[i], features[i])
			return nil, widest
		}
		f.feature[j], f.split[j], f.mode[j] = features[i], values[i], modes[i]
		if widest.at < 0 || features[i] > widest.feature {
			widest = featureUse{i, treeIDs[i], nodeIDs[i], features[i]}
		}
		f.missTrue[j] = missing != nil && missing[i] != 0
		for b, ids := range [2][]int64{falseIDs, trueIDs} {
			c, ok := byKey[treeKey{treeIDs[i], ids[i]}]
			if !ok {
				name := []string{"nodes_falsenodeids", "nodes_truenodeids"}[b]
				a.fail("%s[%d] (tree %d, node %d) is %d, not a node of tree %d", name, i, treeIDs[i], nodeIDs[i], ids[i], treeIDs[i])
				return nil, widest
			}
			f.next[b][j] = int64(at[c])
		}
	}
	// Each tree's root is its first node.
	seen := map[int64]bool{}
	for i, t := range treeIDs {
		if !seen[t] {
			seen[t] = true
			f.roots = append(f.roots, int64(at[i]))
		}
	}
	f.leafWeight, f.leafHas = make([][]float64, leaves), make([][]bool, leaves)
	for j := range leaves {
		f.leafWeight[j], f.leafHas[j] = make([]float64, lv.targets), make([]bool, lv.targets)
	}
	p := lv.prefix
	for _, l := range []struct {
		name string
		n    int
	}{{p + "_nodeids", len(lv.nodeIDs)}, {p + "_treeids", len(lv.treeIDs)}, {lv.weightsName, len(lv.weights)}} {
		if l.n != len(lv.ids) {
			a.fail("attribute %q has %d values for the %d of %s_ids", l.name, l.n, len(lv.ids), p)
			return nil, widest
		}
	}
	for k, id := range lv.ids {
		if id < 0 || id >= int64(lv.targets) {
			a.fail("%s_ids[%d] is %d, outside [0, %d) (%s)", p, k, id, lv.targets, lv.targetsFrom)
			return nil, widest
		}
		i, ok := byKey[treeKey{lv.treeIDs[k], lv.nodeIDs[k]}]
		if !ok || modes[i] != leafMode {
			what := "no node"
			if ok {
				what = fmt.Sprintf("node %d, a %s node, not a LEAF", i, modeNames[i])
			}
			a.fail("%s_treeids[%d] and %s_nodeids[%d] (tree %d, node %d) name %s", p, k, p, k, lv.treeIDs[k], lv.nodeIDs[k], what)
			return nil, widest
		}
		leaf, w := at[i]-interior, lv.weights[k]
		old, has := f.leafWeight[leaf][id], f.leafHas[leaf][id]
		switch {
		case !has:
		case aggregate == "MIN":
			w = min(w, old)
		case aggregate == "MAX":
			w = max(w, old)
		default:
			w += old
		}
		f.leafWeight[leaf][id], f.leafHas[leaf][id] = w, true
	}
	if err := f.measure(); err != nil {
		a.fail("%v", err)
		return nil, widest
	}
	return f, widest
}

// oldForest is a TreeEnsembleRegressor or TreeEnsembleClassifier read at
// load.
type oldForest struct {
	f      *forest
	double bool // a threshold, weight or base value is a double: compute in float64
	widest featureUse
}

// featureUse is the node reading the highest feature: its index in the
// nodes_* attributes (-1 when there are only leaves), its key and the
// feature.
type featureUse struct {
	at                  int
	tree, node, feature int64
}

// input is X as the forest takes it: [N, F] floats (float32, or float64
// where X or an attribute is and the device has float64), a vector of
// features taken as one sample.
func (o *oldForest) input(c *ctx) *core.Tensor {
	x := c.in(0)
	if c.err != nil {
		return nil
	}
	if x.Rank() == 1 {
		x = x.Reshape([]int{1, x.Shape()[0]})
	}
	ok := x.DType().IsFloat() || slices.Contains([]core.DType{core.I64, core.I32}, x.DType())
	if x.Rank() != 2 || !ok {
		c.fail("X is a %s tensor of shape %v, want [N, F] of float, double, int64 or int32", x.DType(), x.Shape())
		return nil
	}
	if w := o.widest; w.at >= 0 && w.feature >= int64(x.Shape()[1]) {
		c.fail("nodes_featureids[%d] (tree %d, node %d) is %d, but X has %d features", w.at, w.tree, w.node, w.feature, x.Shape()[1])
		return nil
	}
	dt := core.F32
	if o.double || x.DType() == core.F64 {
		dt = core.F64
	}
	y := x.Cast(dt)
	if y.Err() != nil && x.DType() != core.F64 {
		// A device without float64 (WebGPU) compares in float32, the
		// double attributes rounded to it.
		y = x.Cast(core.F32)
	}
	if err := y.Err(); err != nil {
		c.fail("X: %v", err)
		return nil
	}
	return y
}

func prepareTreeRegressor(n *node) error {
	a := &mlAttrs{n: n}
	aggregates := []string{"SUM", "AVERAGE", "MIN", "MAX"}
	agg := aggregates[a.oneOf("aggregate_function", aggregates...)]
	post := a.postTransformOf()
	targets := int64(-1)
	if at := a.get("n_targets", pb.AttributeProto_INT, true); at != nil {
		targets = at.GetI()
	}
	lv := leafValues{prefix: "target", ids: a.ints("target_ids", true), nodeIDs: a.ints("target_nodeids", true),
		treeIDs: a.ints("target_treeids", true), weights: a.numbers("target_weights", true),
		targetsFrom: "n_targets", weightsName: "target_weights"}
	base := a.numbers("base_values", false)
	if a.err != nil {
		return a.err
	}
	if targets < 1 {
		return fmt.Errorf("n_targets is %d: want at least one target", targets)
	}
	lv.targets = int(targets)
	if base != nil && len(base) != lv.targets {
		return fmt.Errorf("attribute \"base_values\" has %d values for %d targets (n_targets)", len(base), targets)
	}
	f, widest := readForest(a, lv, agg)
	if a.err != nil {
		return a.err
	}
	f.post, f.base = post, base
	n.prepared = &oldForest{f: f, double: a.double, widest: widest}
	return nil
}

func treeRegressor(c *ctx) ([]*core.Tensor, error) {
	o := c.n.prepared.(*oldForest)
	x := o.input(c)
	if c.err != nil {
		return nil, nil
	}
	y := o.f.eval(c, x)
	if c.err != nil || y == nil {
		return nil, nil
	}
	if y.DType() == core.F64 && (o.f.aggregate == "MIN" || o.f.aggregate == "MAX") {
		// A target no leaf reached holds float64's largest (lowest)
		// value: float32's, in the float32 output, as for a float32 X.
		y = call("clamp", core.Attrs{"min": -math.MaxFloat32, "max": math.MaxFloat32}, y)
	}
	return one(y.Cast(core.F32))
}

// treeClassifier is a TreeEnsembleClassifier read at load: a forest over
// the classes (over the one scored class in the binary case), summing.
type treeClassifier struct {
	oldForest
	ints        []int64  // classlabels_int64s, or nil
	strs        []string // classlabels_strings, or nil
	post        string
	binary      bool
	allPositive bool // no class weight is negative (binary case)
}

func prepareTreeClassifier(n *node) error {
	a := &mlAttrs{n: n}
	post := a.postTransformOf()
	t := &treeClassifier{ints: a.ints("classlabels_int64s", false), strs: a.strs("classlabels_strings", false), post: post}
	lv := leafValues{prefix: "class", ids: a.ints("class_ids", true), nodeIDs: a.ints("class_nodeids", true),
		treeIDs: a.ints("class_treeids", true), weights: a.numbers("class_weights", true), weightsName: "class_weights"}
	base := a.numbers("base_values", false)
	if a.err != nil {
		return a.err
	}
	labels, from := len(t.ints), "classlabels_int64s"
	switch {
	case t.ints != nil && t.strs != nil:
		return fmt.Errorf("attributes \"classlabels_int64s\" and \"classlabels_strings\" are both given: one of them, please")
	case t.strs != nil:
		labels, from = len(t.strs), "classlabels_strings"
	}
	if labels < 2 {
		return fmt.Errorf("%s has %d labels: want at least 2 (one of classlabels_int64s, classlabels_strings)", from, labels)
	}
	lv.targets, lv.targetsFrom = labels, fmt.Sprintf("the %d labels of %s", labels, from)
	scored := map[int64]bool{}
	t.allPositive = true
	for k, id := range lv.ids {
		scored[id] = true
		if k < len(lv.weights) && lv.weights[k] < 0 {
			t.allPositive = false
		}
	}
	t.binary = labels == 2 && len(scored) == 1
	var one int64
	if t.binary {
		// One score s, of the one class in class_ids: the forest has one
		// target.
		one = lv.ids[0]
		if one < 0 || one > 1 {
			return fmt.Errorf("class_ids[0] is %d, outside [0, 2) (%s)", one, lv.targetsFrom)
		}
		lv.ids = make([]int64, len(lv.ids))
		lv.targets = 1
	}
	f, widest := readForest(a, lv, "SUM")
	if a.err != nil {
		return a.err
	}
	f.post = "NONE"
	switch {
	case !t.binary && base != nil && len(base) != labels:
		return fmt.Errorf("attribute \"base_values\" has %d values for %d classes (%s)", len(base), labels, from)
	case !t.binary:
		f.base = base
	case len(base) == 1:
		f.base = base
	case len(base) == 2:
		f.base = base[one : one+1]
	case len(base) > 2:
		return fmt.Errorf("attribute \"base_values\" has %d values for the 2 classes of a binary classifier", len(base))
	}
	t.oldForest = oldForest{f: f, double: a.double, widest: widest}
	n.prepared = t
	return nil
}

// treeClassify gives Y, the labels ([N] int64 or strings), and Z, the
// scores after the post transform ([N, classes] float).
func treeClassify(c *ctx) ([]Value, error) {
	t := c.n.prepared.(*treeClassifier)
	x := t.input(c)
	if c.err != nil {
		return nil, nil
	}
	raw := t.f.eval(c, x)
	if c.err != nil || raw == nil {
		return nil, nil
	}
	if err := raw.Err(); err != nil {
		return nil, err
	}
	n := raw.Shape()[0]
	var z, best *core.Tensor
	if t.binary {
		z, best = t.binaryScores(raw)
	} else {
		z = postTransform(raw, t.post)
		best = call("argmax", core.Attrs{"axis": 1}, raw).Reshape([]int{n})
	}
	z = z.Cast(core.F32)
	if err := cmp.Or(z.Err(), best.Err()); err != nil {
		return nil, err
	}
	var y Value
	if t.ints != nil {
		labels := core.FromSlice(t.ints, core.Shape{len(t.ints)}, best.Device())
		y = call("index_select", core.Attrs{"axis": 0}, labels, best.Cast(core.I64))
	} else {
		at, err := best.Cast(core.I64).Int64s()
		if err != nil {
			return nil, err
		}
		s := &Strings{Shape: core.Shape{n}, Data: make([]string, n)}
		for i, k := range at {
			s.Data[i] = t.strs[k]
		}
		y = s
	}
	return []Value{y, z}, nil
}

// binaryScores are the binary case's scores, [N, 2], from the one score
// s ([N, 1]), and the index of each sample's label (0 or 1), as
// onnxruntime computes them.
func (t *treeClassifier) binaryScores(s *core.Tensor) (z, best *core.Tensor) {
	n := s.Shape()[0]
	cut := 0.0
	switch {
	case t.allPositive:
		cut = 0.5
		z = call("concat", core.Attrs{"axis": 1}, call("sub", nil, like(s, 1), s), s)
	case t.post == "LOGISTIC":
		z = call("concat", core.Attrs{"axis": 1}, call("sigmoid", nil, call("neg", nil, s)), call("sigmoid", nil, s))
	default:
		z = call("concat", core.Attrs{"axis": 1}, call("neg", nil, s), s)
	}
	best = call("gt", nil, s, like(s, cut)).Cast(core.I64).Reshape([]int{n})
	return z, best
}
