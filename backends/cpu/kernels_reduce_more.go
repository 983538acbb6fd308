package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels of core/ops_reduce_more.go. Floating inputs reduce in float64 (or
// exactly, extremes in their own type) and round once into the output;
// integer inputs reduce in int64 so that i64 values beyond 2^53 stay
// exact and overflow wraps like PyTorch's. The reductions read their
// input in place through the plan and read a broadcast reduced dim once,
// as kernels_reduce.go says: a group repeated m times counts m times in
// sums and is raised to the m-th power in products.

func init() {
	register("prod", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		if !out.DType().IsFloat() {
			writeI64(out, planProdsI64(in, axes))
			return nil
		}
		writeF64(out, planProds(in, axes))
		return nil
	})
	register("max", unsignedOrder(extremeKernel(1), nil, []int{0}, []int{0}))
	register("min", unsignedOrder(extremeKernel(-1), nil, []int{0}, []int{0}))
	register("argmax", unsignedOrder(argExtremeKernel(1), nil, []int{0}, nil))
	register("argmin", unsignedOrder(argExtremeKernel(-1), nil, []int{0}, nil))
	register("var", varianceKernel(false))
	register("std", varianceKernel(true))
	register("logsumexp", logsumexpKernel)
	register("norm", vectorNormKernel)
	register("cumsum", cumulativeKernel(0, func(acc, v float64) float64 { return acc + v }, func(acc, v int64) int64 { return acc + v }))
	register("cumprod", cumulativeKernel(1, func(acc, v float64) float64 { return acc * v }, func(acc, v int64) int64 { return acc * v }))
	register("any", anyAllKernel(false))
	register("all", anyAllKernel(true))
	register("_prod_grad", prodGradKernel)
	register("_extreme_grad", extremeGradKernel)
	register("_norm_grad", vectorNormGradKernel)
	register("_cumprod_grad", cumprodGradKernel)
}

// powWrap is x^m in wrapping int64 arithmetic (the product of m copies of
// x, whatever the order), by squaring.
func powWrap(x int64, m int) int64 {
	r := int64(1)
	for ; m > 0; m >>= 1 {
		if m&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

// extremeBeats reports whether v replaces best in a search for the largest
// (dir > 0) or smallest (dir < 0) value.
func extremeBeats[T int64 | float64](dir int, best, v T) bool {
	if dir > 0 {
		return v > best
	}
	return v < best
}

// extremeKernel reduces to the largest (dir > 0) or smallest value; a NaN,
// once met, stays (PyTorch's amax/amin propagate NaN).
func extremeKernel(dir int) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		if !in.DType().IsFloat() {
			writeI64(out, planExtremesI64(in, axes, dir > 0))
			return nil
		}
		writeF64(out, planExtremes(in, axes, dir > 0, false))
		return nil
	}
}

// argExtremeKernel returns the first index whose value is better than every
// earlier one; the first NaN wins and ends the search, as in PyTorch. It
// streams the input with a third position, the index being searched (along
// the axis, or row-major for a flat search). A dim the input broadcasts
// holds copies: their first comes first, so it is walked at index 0 only -
// except a kept dim of an axis search, whose outputs all need filling.
func argExtremeKernel(dir int) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, axes, flat, err := kernelkit.ArgReduceAxes(in.Rank(), k.Attrs)
		if err != nil {
			return err
		}
		if at, ok := planArgExtremes(in, axes, dir > 0); ok {
			writeI64(out, at)
			return nil
		}
		shape, ist := in.Shape(), in.Strides()
		ost, jst := make([]int, len(shape)), make([]int, len(shape))
		if flat {
			jst = rowMajor(shape)
		} else {
			rest := rowMajor(core.ReduceShape(shape, []int{axis}, false))
			for d, r := 0, 0; d < len(shape); d++ {
				if d != axis {
					ost[d] = rest[r]
					r++
				}
			}
			jst[axis] = 1
		}
		for d := range shape {
			if ist[d] == 0 && (flat || d == axis) {
				shape[d] = min(shape[d], 1)
			}
		}
		w := walk{shape: shape, strides: [][]int{ist, ost, jst}, base: []int{in.Offset(), 0, 0}}
		w.coalesce()
		ostep, js := w.step(1), w.step(2)
		at := fillI64(out.Numel(), -1)
		if in.DType().IsFloat() {
			best := tempF64(len(at))
			runsF64(&w, in, func(pos []int, v []float64) {
				for k, x := range v {
					o := pos[1] + k*ostep
					if b := best[o]; at[o] < 0 || (b == b && (x != x || extremeBeats(dir, b, x))) {
						best[o], at[o] = x, int64(pos[2]+k*js)
					}
				}
			})
		} else {
			best := tempI64(len(at))
			runsI64(&w, in, func(pos []int, v []int64) {
				for k, x := range v {
					if o := pos[1] + k*ostep; at[o] < 0 || extremeBeats(dir, best[o], x) {
						best[o], at[o] = x, int64(pos[2]+k*js)
					}
				}
			})
		}
		writeI64(out, at)
		return nil
	}
}

// varianceKernel computes the variance (or its square root) in two passes:
// the mean first, then the squared deviations, which is far more accurate
// than sum(x^2) - n*mean^2.
func varianceKernel(sqrt bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		n := float64(reducedCount(in.Shape(), axes))
		mean := planSums(in, axes, formSum)
		for o := range mean {
			mean[o] /= n
		}
		ss := planDeviations(in, axes, mean)
		div := math.Max(n-k.Attrs.Float("correction"), 0)
		for o := range ss {
			ss[o] /= div
			if sqrt {
				ss[o] = math.Sqrt(ss[o])
			}
		}
		writeF64(out, ss)
		return nil
	}
}

// logsumexpKernel follows PyTorch: shift by the maximum unless it is
// infinite (then by 0, so all -inf gives -inf and any +inf gives +inf).
// The float32 kinds take their exponentials in float32 (a few ulps, far
// below the output's rounding), summed in float64.
func logsumexpKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
	m := planExtremes(in, axes, true, false)
	for o, x := range m {
		if math.IsInf(x, 0) {
			m[o] = 0
		}
	}
	s := planSumsMap(in, axes, func(g int, x float64) float64 { return math.Exp(x - m[g]) },
		func(g int, x []float32) float64 { return expSumF32(nil, x, float32(m[g])) })
	for o := range s {
		s[o] = math.Log(s[o]) + m[o]
	}
	writeF64(out, s)
	return nil
}

func vectorNormKernel(k *core.KernelCall) error {
	in := k.Inputs[0]
	writeF64(k.Outputs[0], vectorNorms(in, oprules.ReducedAxes(in.Rank(), k.Attrs), k.Attrs.Float("ord")))
	return nil
}

// vectorNorms are the ord-norms of in over axes, one per element of the
// reduced shape: the count of non-zeros (0), the largest or smallest |x|
// (inf, -inf), or (sum |x|^ord)^(1/ord); NaN where a value is NaN. The norm
// op writes them; normalize divides by them.
func vectorNorms(in *core.Tensor, axes []int, ord float64) []float64 {
	var acc []float64
	switch {
	case math.IsInf(ord, 0):
		acc = planExtremes(in, axes, ord > 0, true)
	case ord == 0:
		acc = planSums(in, axes, formNz)
	case ord == 1:
		acc = planSums(in, axes, formAbs)
	case ord == 2:
		acc = planSums(in, axes, formSq)
		for o := range acc {
			acc[o] = math.Sqrt(acc[o])
		}
	default:
		acc = planSumsMap(in, axes, func(_ int, x float64) float64 { return math.Pow(math.Abs(x), ord) }, nil)
		for o := range acc {
			acc[o] = math.Pow(acc[o], 1/ord)
		}
	}
	return acc
}

// cumulativeKernel runs a running sum or product along the axis, in int64 for
// integer outputs and float64 otherwise.
func cumulativeKernel(identity float64, stepF func(acc, v float64) float64, stepI func(acc, v int64) int64) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, err := oprules.ScanAxis(in.Rank(), k.Attrs)
		if err != nil {
			return err
		}
		outer, n, inner := axisSplit(in.Shape(), axis)
		if !out.DType().IsFloat() {
			v := readI64(in)
			eachAxisLine(outer, n, inner, func(at func(j int) int) {
				acc := int64(identity)
				for j := 0; j < n; j++ {
					acc = stepI(acc, v[at(j)])
					v[at(j)] = acc
				}
			})
			writeI64(out, v)
			return nil
		}
		v := readF64(in)
		eachAxisLine(outer, n, inner, func(at func(j int) int) {
			acc := identity
			for j := 0; j < n; j++ {
				acc = stepF(acc, v[at(j)])
				v[at(j)] = acc
			}
		})
		writeF64(out, v)
		return nil
	}
}

// eachAxisLine calls fn once per line of an outer x n x inner layout; at(j)
// is the flat index of the line's j-th element.
func eachAxisLine(outer, n, inner int, fn func(at func(j int) int)) {
	for o := 0; o < outer; o++ {
		for r := 0; r < inner; r++ {
			base := o*n*inner + r
			fn(func(j int) int { return base + j*inner })
		}
	}
}

// anyAllKernel counts the non-zero elements of every group (NaN is true,
// -0 false): any wants one, all every one.
func anyAllKernel(all bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		n := float64(reducedCount(in.Shape(), axes))
		res := tempI64(out.Numel())
		for o, c := range planSums(in, axes, formNz) {
			if (all && c == n) || (!all && c > 0) {
				res[o] = 1
			}
		}
		writeI64(out, res)
		return nil
	}
}

// groupMembers lists the input elements of every output element of a
// reduction, in row-major order: group o is members[start[o]:start[o+1]].
func groupMembers(shape core.Shape, axes []int) (start, members []int) {
	idx := reduceIndex(shape, axes)
	start = tempInts(outCount(shape, axes) + 1)
	for _, o := range idx {
		start[o+1]++
	}
	for o := 1; o < len(start); o++ {
		start[o] += start[o-1]
	}
	fill := tempInts(len(start) - 1)
	copy(fill, start)
	members = tempInts(len(idx))
	for i, o := range idx {
		members[fill[o]] = i
		fill[o]++
	}
	return start, members
}

// prodGradKernel gives every element the product of the others in its group
// as prefix * suffix, which stays exact when the group holds zeros.
func prodGradKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	start, members := groupMembers(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs))
	v := readF64(in)
	res := tempF64(len(v))
	for o := 0; o+1 < len(start); o++ {
		group := members[start[o]:start[o+1]]
		prefix := 1.0
		for _, i := range group {
			res[i] = prefix
			prefix *= v[i]
		}
		suffix := 1.0
		for j := len(group) - 1; j >= 0; j-- {
			res[group[j]] *= suffix
			suffix *= v[group[j]]
		}
	}
	writeF64(out, res)
	return nil
}

// extremeGradKernel shares 1 evenly among the elements equal to the reduced
// value of their group.
func extremeGradKernel(k *core.KernelCall) error {
	x, r, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	shape := x.Shape()
	axes := oprules.ReducedAxes(x.Rank(), k.Attrs)
	v, at := readF64(x), readF64As(r, shape)
	idx := reduceIndex(shape, axes)
	count := tempF64(outCount(shape, axes))
	for i, o := range idx {
		if v[i] == at[i] {
			count[o]++
		}
	}
	res := tempF64(len(v))
	for i, o := range idx {
		if v[i] == at[i] {
			res[i] = 1 / count[o]
		}
	}
	writeF64(out, res)
	return nil
}

// vectorNormGradKernel is PyTorch's linalg_vector_norm_backward: sgn(x) * g for
// ord 1; x * g / n (0 where n is 0) for ord 2; signOrNaN(x) |x|^(p-1) g / n^(p-1)
// otherwise; and for ±inf the gradient goes to the elements whose |x| equals
// the norm, shared evenly between ties.
func vectorNormGradKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	shape := x.Shape()
	ord := k.Attrs.Float("ord")
	v, n, g := readF64(x), readF64As(k.Inputs[1], shape), readF64As(k.Inputs[2], shape)
	res := tempF64(len(v))
	switch {
	case ord == 0:
	case ord == 1:
		for i := range res {
			res[i] = signOrNaN(v[i]) * g[i]
		}
	case ord == 2:
		for i := range res {
			if n[i] != 0 {
				res[i] = v[i] * (g[i] / n[i])
			}
		}
	case math.IsInf(ord, 0):
		axes := oprules.ReducedAxes(x.Rank(), k.Attrs)
		idx := reduceIndex(shape, axes)
		isMax := func(i int) bool { return math.Abs(v[i]) == n[i] || (v[i] != v[i] && n[i] != n[i]) }
		count := tempF64(outCount(shape, axes))
		for i, o := range idx {
			if isMax(i) {
				count[o]++
			}
		}
		for i, o := range idx {
			if isMax(i) {
				res[i] = signOrNaN(v[i]) * g[i] / count[o]
			}
		}
	default:
		for i := range res {
			scaled := 0.0
			if v[i] != 0 || ord >= 1 {
				scaled = signOrNaN(v[i]) * math.Pow(math.Abs(v[i]), ord-1)
			}
			scale := g[i] / math.Pow(n[i], ord-1)
			if ord > 1 && n[i] == 0 {
				scale = 0
			}
			res[i] = scaled * scale
		}
	}
	writeF64(out, res)
	return nil
}

// sgn is torch.sgn on reals: -1, 0 or 1, NaN for NaN.
func signOrNaN(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	case x == 0:
		return 0
	}
	return x
}

// cumprodGradKernel computes, along every line, grad_i = P_{i-1} * S_i
// where P is the running product before i and S_i = g_i + x_{i+1} S_{i+1}
// gathers the upstream gradients of the later outputs: no division, so
// zeros in x are exact.
func cumprodGradKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis, err := oprules.ScanAxis(x.Rank(), k.Attrs)
	if err != nil {
		return err
	}
	outer, n, inner := axisSplit(x.Shape(), axis)
	v, g := readF64(x), readF64(k.Inputs[1])
	res := tempF64(len(v))
	eachAxisLine(outer, n, inner, func(at func(j int) int) {
		s := 0.0
		for j := n - 1; j >= 0; j-- {
			if j == n-1 {
				s = g[at(j)]
			} else {
				s = g[at(j)] + v[at(j+1)]*s
			}
			res[at(j)] = s
		}
		p := 1.0
		for j := 0; j < n; j++ {
			res[at(j)] *= p
			p *= v[at(j)]
		}
	})
	writeF64(out, res)
	return nil
}
