package cpu

import (
	"cmp"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Sorting works on lanes: the elements along the axis for one index of the
// other dims. Floating values compare as float64 (exact for every float
// dtype) with NaN above everything; integers and bools compare as int64,
// a u64 through u64Key so that values past 2^63 sort last.
// Sorts are stable, so equal elements keep their index order.

func init() {
	register("sort", sortKernel)
	register("argsort", sortKernel)
	register("topk", topkKernel)
	register("unique", uniqueKernel)
}

// sortKeys holds a tensor's elements in row-major order as comparable keys.
type sortKeys struct {
	f     []float64
	i     []int64
	isInt bool
}

func keysOf(t *core.Tensor) sortKeys {
	if t.DType().IsFloat() {
		return sortKeys{f: readF64(t)}
	}
	keys := sortKeys{i: readI64(t), isInt: true}
	if t.DType().IsUnsigned64() {
		for j, v := range keys.i {
			keys.i[j] = u64Key(v)
		}
	}
	return keys
}

// compare orders elements a and b: negative when a sorts first.
func (k sortKeys) compare(a, b int) int {
	if k.isInt {
		return cmp.Compare(k.i[a], k.i[b])
	}
	// cmp.Compare puts NaN first; torch puts it last.
	x, y := k.f[a], k.f[b]
	switch xn, yn := x != x, y != y; {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

// same reports whether a and b hold the same value (NaN never does).
func (k sortKeys) same(a, b int) bool {
	if k.isInt {
		return k.i[a] == k.i[b]
	}
	return k.f[a] == k.f[b]
}

// lanes describes the lanes of a shape along an axis: element j of lane
// (o, i) is at row-major index (o*n + j)*inner + i. A scalar is one lane of
// one element.
type lanes struct{ outer, n, inner int }

func lanesOf(s core.Shape, axis int) (lanes, error) {
	if len(s) == 0 {
		return lanes{1, 1, 1}, nil
	}
	ax, err := core.NormAxis(axis, len(s))
	if err != nil {
		return lanes{}, err
	}
	return lanes{outer: s[:ax].Numel(), n: s[ax], inner: s[ax+1:].Numel()}, nil
}

func (l lanes) count() int { return l.outer * l.inner }

// at is the row-major index of element j of lane number lane.
func (l lanes) at(lane, j int) int {
	o, i := lane/l.inner, lane%l.inner
	return (o*l.n+j)*l.inner + i
}

// sortedLane returns the row-major indices of one lane in sorted order.
func sortedLane(keys sortKeys, l lanes, lane int, descending bool) []int {
	perm := make([]int, l.n)
	for j := range perm {
		perm[j] = l.at(lane, j)
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		if descending {
			return keys.compare(b, a)
		}
		return keys.compare(a, b)
	})
	return perm
}

// writeSelection writes the first k sorted elements of every lane: values
// (raw bytes, when values is not nil) and their positions along the axis.
func writeSelection(x, values, indices *core.Tensor, l lanes, k int, pick func(lane int) []int) {
	outLanes := lanes{outer: l.outer, n: k, inner: l.inner}
	srcAt := make([]int, outLanes.count()*k)
	pos := tempI64(len(srcAt))
	xAt := indexMap(x, x.Shape())
	parallelFor(l.count(), l.n*4, func(lo, hi int) {
		for lane := lo; lane < hi; lane++ {
			for j, e := range pick(lane) {
				dst := outLanes.at(lane, j)
				srcAt[dst] = xAt[e]
				pos[dst] = int64((e / l.inner) % l.n)
			}
		}
	})
	if values != nil {
		copyElements(x.DType().Size(), denseOut(values), host(x), nil, srcAt, nil)
	}
	writeI64(indices, pos)
}

// sortKernel serves sort (values and indices) and argsort (indices only).
func sortKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	l, err := lanesOf(x.Shape(), k.Attrs.Int("axis"))
	if err != nil {
		return err
	}
	keys, desc := keysOf(x), k.Attrs.Bool("descending")
	values, indices := (*core.Tensor)(nil), k.Outputs[0]
	if len(k.Outputs) == 2 {
		values, indices = k.Outputs[0], k.Outputs[1]
	}
	writeSelection(x, values, indices, l, l.n, func(lane int) []int { return sortedLane(keys, l, lane, desc) })
	return nil
}

func topkKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	l, err := lanesOf(x.Shape(), k.Attrs.Int("axis"))
	if err != nil {
		return err
	}
	keys, largest, sorted, n := keysOf(x), k.Attrs.Bool("largest"), k.Attrs.Bool("sorted"), k.Attrs.Int("k")
	writeSelection(x, k.Outputs[0], k.Outputs[1], l, n, func(lane int) []int {
		top := sortedLane(keys, l, lane, largest)[:n]
		if !sorted {
			slices.Sort(top)
		}
		return top
	})
	return nil
}

// uniqueKernel groups equal values of the flattened input. Sorted groups
// come from a stable sort; unsorted ones in order of first occurrence.
// Every NaN is a group of its own, as in torch.
func uniqueKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	keys := keysOf(x)
	n := x.Numel()
	group := make([]int64, n)
	var first []int
	var counts []int64
	if k.Attrs.Bool("sorted") {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, keys.compare)
		for j, e := range order {
			if j == 0 || !keys.same(order[j-1], e) {
				first, counts = append(first, e), append(counts, 0)
			}
			group[e] = int64(len(first) - 1)
			counts[len(counts)-1]++
		}
	} else {
		seenF, seenI := map[float64]int{}, map[int64]int{}
		for e := 0; e < n; e++ {
			g, ok := 0, false
			if keys.isInt {
				g, ok = seenI[keys.i[e]]
			} else {
				g, ok = seenF[keys.f[e]]
			}
			if !ok {
				g = len(first)
				first, counts = append(first, e), append(counts, 0)
				if keys.isInt {
					seenI[keys.i[e]] = g
				} else {
					seenF[keys.f[e]] = g
				}
			}
			group[e] = int64(g)
			counts[g]++
		}
	}
	values, err := k.Alloc(core.Shape{len(first)}, x.DType())
	if err != nil {
		return err
	}
	xAt := indexMap(x, x.Shape())
	srcAt := make([]int, len(first))
	for g, e := range first {
		srcAt[g] = xAt[e]
	}
	copyElements(x.DType().Size(), denseOut(values), host(x), nil, srcAt, nil)
	outs := []*core.Tensor{values}
	if k.Attrs.Bool("return_inverse") {
		inv, err := k.Alloc(x.Shape(), core.I64)
		if err != nil {
			return err
		}
		writeI64(inv, group)
		outs = append(outs, inv)
	}
	if k.Attrs.Bool("return_counts") {
		cnt, err := k.Alloc(core.Shape{len(counts)}, core.I64)
		if err != nil {
			return err
		}
		writeI64(cnt, counts)
		outs = append(outs, cnt)
	}
	k.SetOutputs(outs...)
	return nil
}
