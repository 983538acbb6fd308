package ir

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Random matmul programs with elementwise epilogues (bias of several
// broadcast shapes, activations, residuals; batched and plain; aligned
// shapes that take the vec4 kernels and odd ones that do not; transposed
// weights), fused on WebGPU, against the same graph run op by op.
func TestMatmulEpiloguesEqualTheOpsTheyReplace(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { matmulEpiloguesEqualTheOps(t, core.CPU, 1e-6) })
	t.Run("webgpu", func(t *testing.T) { matmulEpiloguesEqualTheOps(t, webgpuOrSkip(t), 1e-4) })
}

// matmulEpiloguesEqualTheOps folds random epilogues into matmuls on dev
// and checks the folded graph against the graph run op by op, within tol
// (the CPU runs the same kernels in its epilogue, on blocks of the
// product instead of the whole: only the transcendentals' short tails
// can round differently).
func matmulEpiloguesEqualTheOps(t *testing.T, dev core.Device, tol float64) {
	// gelu_tanh is gelu with attributes (which an epilogue must keep);
	// relu_grad is relu's backward, where(e > 0, y, 0), and gelu_grad gelu's.
	unary := []string{"relu", "tanh", "sigmoid", "erf", "neg", "exp", "gelu_tanh"}
	binary := []string{"add", "sub", "mul", "maximum", "relu_grad", "gelu_grad"}
	folded := 0
	for seed := range 24 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		dims := []int{3, 4, 8, 13, 16, 32, 68}
		if dev == core.CPU && seed%3 == 0 {
			// Past the CPU's small-product paths: blocks of the packed
			// product, several k panels, each finished by its epilogue.
			dims = []int{70, 130, 300, 520}
		}
		m, k, n := dims[rng.IntN(len(dims))], dims[rng.IntN(len(dims))], dims[rng.IntN(len(dims))]
		batched := rng.IntN(2) == 0
		xShape := []int{m, k}
		if batched {
			xShape = []int{2, m, k}
		}
		outShape := append(append([]int{}, xShape[:len(xShape)-1]...), n)
		w := randnOn(dev, 100+seed, k, n)
		transposed := rng.IntN(3) == 0
		if transposed {
			w = c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, randnOn(dev, 100+seed, n, k))
		}
		extraShapes := [][]int{{n}, {m, 1}, outShape, {1, n}}
		steps := 1 + rng.IntN(4)
		ops := make([][3]int, steps)
		for i := range ops {
			ops[i] = [3]int{rng.IntN(2), rng.IntN(100), rng.IntN(len(extraShapes))}
		}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			y := c1("matmul", nil, in[0], w)
			for i, s := range ops {
				if s[0] == 0 {
					if op := unary[s[1]%len(unary)]; op == "gelu_tanh" {
						y = c1("gelu", core.Attrs{"approximate": "tanh"}, y)
					} else {
						y = c1(op, nil, y)
					}
					continue
				}
				e := randnOn(dev, 300+10*seed+i, extraShapes[s[2]]...)
				if s[2] == 2 {
					e = in[1] // a residual: a graph input of the output's shape
				}
				switch op := binary[s[1]%len(binary)]; op {
				case "relu_grad":
					y = c1("where", nil, c1("gt", nil, e, core.Scalar(0, core.F32, dev)), y, c1("zeros_like", nil, y))
				case "gelu_grad":
					y = c1("_gelu_backward", core.Attrs{"approximate": "tanh"}, y, c1("add", nil, y, e))
				default:
					y = c1(op, nil, y, e)
				}
			}
			return []*core.Tensor{y}, nil
		}
		x, res := randnOn(dev, 1, xShape...), randnOn(dev, 2, outShape...)
		g, err := Trace(program, x, res)
		require.NoError(t, err)
		plain, err := g.Run(x, res)
		require.NoError(t, err)
		_, err = g.FuseElementwise(dev)
		require.NoError(t, err)
		nf, err := g.FuseEpilogues(dev)
		require.NoError(t, err)
		folded += nf
		if nf > 0 {
			require.Contains(t, g.String(), "fused_matmul[")
		}
		_, before := FusionCounts()
		fused, err := g.Run(x, res)
		require.NoError(t, err)
		_, after := FusionCounts()
		require.Equal(t, before, after, "every fused node ran as one kernel\n%s", g)
		require.Equal(t, plain[0].Shape(), fused[0].Shape())
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		for i := range a {
			if !(math.IsInf(a[i], 0) || math.IsNaN(a[i])) {
				require.InDelta(t, a[i], b[i], tol+tol*math.Abs(a[i]), "seed %d element %d\n%s", seed, i, g)
			}
		}
	}
	assert.Equal(t, 24, folded, "every program ends in an epilogue to fold")
}

// A product used by two consumers, or returned, keeps its own kernel:
// folding it would compute it twice or lose it. (Used twice inside one
// fused tree is fine: the epilogue reads it once.)
func TestMatmulEpilogueIsOnlyFoldedWhenLegal(t *testing.T) {
	dev := webgpuOrSkip(t)
	w, bias := randnOn(dev, 1, 8, 8), randnOn(dev, 2, 8)
	twice := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("matmul", nil, in[0], w)
		return []*core.Tensor{c1("relu", nil, y), c1("tanh", nil, y)}, nil
	}
	returned := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("matmul", nil, in[0], w)
		return []*core.Tensor{y, c1("add", nil, y, bias)}, nil
	}
	// The consumer broadcasts the product up to a bigger shape.
	grows := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("matmul", nil, in[0], w)
		return []*core.Tensor{c1("add", nil, y, in[1])}, nil
	}
	x := randnOn(dev, 3, 4, 8)
	for name, c := range map[string]struct {
		fn  func([]*core.Tensor) ([]*core.Tensor, error)
		ins []*core.Tensor
	}{"used twice": {twice, []*core.Tensor{x}}, "returned": {returned, []*core.Tensor{x}},
		"broadcast up": {grows, []*core.Tensor{x, randnOn(dev, 4, 3, 4, 8)}}} {
		g, err := Trace(c.fn, c.ins...)
		require.NoError(t, err, name)
		_, err = g.FuseElementwise(dev)
		require.NoError(t, err, name)
		n, err := g.FuseEpilogues(dev)
		require.NoError(t, err, name)
		assert.Equal(t, 0, n, name)
		assert.False(t, strings.Contains(g.String(), "fused_matmul"), name)
	}
}

// With gradients recorded the matmul runs as its own (recorded) op and the
// epilogue tree as a fused kernel with a generated gradient: backward
// through the compiled graph equals eager.
func TestMatmulEpilogueKeepsGradients(t *testing.T) {
	dev := webgpuOrSkip(t)
	w, bias := randnOn(dev, 1, 8, 4), randnOn(dev, 2, 4)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("sum", nil, c1("relu", nil, c1("add", nil, c1("matmul", nil, in[0], w), bias)))}, nil
	}
	x := randnOn(dev, 3, 5, 8)
	g, err := Trace(fn, x)
	require.NoError(t, err)
	_, err = g.FuseElementwise(dev)
	require.NoError(t, err)
	n, err := g.FuseEpilogues(dev)
	require.NoError(t, err)
	require.Equal(t, 1, n, "%s", g)
	xs := x.Detach().SetRequiresGrad(true)
	_, before := FusionCounts()
	out, err := g.Run(xs)
	require.NoError(t, err)
	_, after := FusionCounts()
	assert.Equal(t, before, after, "with a gradient to record the matmul runs as its own op and the tree fused")
	require.NoError(t, out[0].Backward())
	got, _ := xs.Grad().Float64s()
	xe := x.Detach().SetRequiresGrad(true)
	want, _ := fn([]*core.Tensor{xe})
	require.NoError(t, want[0].Backward())
	exp, _ := xe.Grad().Float64s()
	assert.InDeltaSlice(t, exp, got, 1e-5)
}

// Sparse products with epilogues (a GCN layer's bias and ReLU, residuals
// and [rows, 1] scales), fused on WebGPU, against the same graph op by op.
func TestSpmmEpiloguesEqualTheOpsTheyReplace(t *testing.T) {
	dev := webgpuOrSkip(t)
	folded := 0
	for seed := range 12 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		rows, cols, feats := 5+rng.IntN(40), 3+rng.IntN(30), 1+rng.IntN(20)
		ptr := []int64{0}
		var idx []int64
		for range rows {
			for range rng.IntN(6) {
				idx = append(idx, int64(rng.IntN(cols)))
			}
			ptr = append(ptr, int64(len(idx)))
		}
		indptr := core.FromSlice(ptr, core.Shape{len(ptr)}, dev)
		indices := core.FromSlice(idx, core.Shape{len(idx)}, dev)
		values := randnOn(dev, 10+seed, len(idx))
		bias, scale := randnOn(dev, 20+seed, feats), randnOn(dev, 30+seed, rows, 1)
		variant := seed % 3
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			y := c1("spmm", nil, indptr, indices, values, in[0])
			switch variant {
			case 0:
				y = c1("relu", nil, c1("add", nil, y, bias))
			case 1:
				y = c1("add", nil, c1("mul", nil, y, scale), in[1])
			default:
				y = c1("tanh", nil, y)
			}
			return []*core.Tensor{y}, nil
		}
		x, res := randnOn(dev, 1, cols, feats), randnOn(dev, 2, rows, feats)
		g, err := Trace(program, x, res)
		require.NoError(t, err)
		plain, err := g.Run(x, res)
		require.NoError(t, err)
		rep, err := g.Fuse(dev)
		require.NoError(t, err)
		folded += rep.Epilogues
		require.Contains(t, g.String(), "fused_spmm[", "seed %d", seed)
		_, before := FusionCounts()
		fused, err := g.Run(x, res)
		require.NoError(t, err)
		_, after := FusionCounts()
		require.Equal(t, before, after, "every fused node ran as one kernel\n%s", g)
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		assert.InDeltaSlice(t, a, b, 1e-5, "seed %d", seed)
	}
	assert.Equal(t, 12, folded)
}

// A GCN-style layer, relu(A (x w) + b), trained through a compiled graph:
// the products run as recorded ops, the bias and ReLU as a fused kernel
// with a generated gradient, and every gradient equals eager's.
func TestSpmmEpilogueGradientsEqualEager(t *testing.T) {
	dev := webgpuOrSkip(t)
	indptr := core.FromSlice([]int64{0, 2, 3, 3, 6}, core.Shape{5}, dev)
	indices := core.FromSlice([]int64{0, 3, 1, 0, 2, 3}, core.Shape{6}, dev)
	values := randnOn(dev, 1, 6)
	w := randnOn(dev, 2, 5, 3).Detach().SetRequiresGrad(true)
	b := randnOn(dev, 3, 3).Detach().SetRequiresGrad(true)
	layer := func(in []*core.Tensor) ([]*core.Tensor, error) {
		h := c1("matmul", nil, in[0], w)
		y := c1("relu", nil, c1("add", nil, c1("spmm", nil, indptr, indices, values, h), b))
		return []*core.Tensor{y}, nil
	}
	x, up := randnOn(dev, 4, 4, 5), randnOn(dev, 5, 4, 3)
	g, err := Trace(layer, x)
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Epilogues, "%s", g)
	grads := func(run func([]*core.Tensor) ([]*core.Tensor, error)) [][]float64 {
		xs := x.Detach().SetRequiresGrad(true)
		w.ZeroGrad()
		b.ZeroGrad()
		out, err := run([]*core.Tensor{xs})
		require.NoError(t, err)
		require.NoError(t, out[0].Backward(up))
		var res [][]float64
		for _, v := range []*core.Tensor{xs, w, b} {
			f, err := v.Grad().Float64s()
			require.NoError(t, err)
			res = append(res, f)
		}
		return res
	}
	want := grads(layer)
	_, before := FusionCounts()
	got := grads(func(in []*core.Tensor) ([]*core.Tensor, error) { return g.Run(in...) })
	_, after := FusionCounts()
	assert.Equal(t, before, after, "nothing fell back to the original ops")
	for k := range want {
		assert.InDeltaSlice(t, want[k], got[k], 1e-4, "gradient %d", k)
	}
}

// Convolutions (with and without a bias, 1-D and 2-D, strided and padded)
// with epilogues (ReLU, a per-channel scale, a residual), fused on WebGPU,
// against the same graph op by op - and with gradients recorded, against
// eager autograd.
func TestConvEpiloguesEqualTheOpsTheyReplace(t *testing.T) {
	dev := webgpuOrSkip(t)
	for seed := range 8 {
		oned := seed%4 == 3
		xShape, wShape, scaleShape := []int{2, 3, 9, 8}, []int{4, 3, 3, 3}, []int{4, 1, 1}
		op, attrs := "conv2d", core.Attrs{"padding": []int{1, 1}, "stride": []int{1 + seed%2, 1}}
		if oned {
			xShape, wShape, scaleShape = []int{2, 3, 9}, []int{4, 3, 3}, []int{4, 1}
			op, attrs = "conv1d", core.Attrs{"padding": []int{1}}
		}
		w := randnOn(dev, 10+seed, wShape...).Detach().SetRequiresGrad(true)
		bias := randnOn(dev, 20+seed, 4)
		scale := randnOn(dev, 30+seed, scaleShape...)
		withBias := seed%2 == 0
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			args := []*core.Tensor{in[0], w}
			if withBias {
				args = append(args, bias)
			}
			y := c1(op, attrs, args...)
			y = c1("relu", nil, c1("mul", nil, y, scale))
			if seed%3 == 0 {
				y = c1("add", nil, y, y) // the product read twice inside one tree
			}
			return []*core.Tensor{y}, nil
		}
		x := randnOn(dev, 1, xShape...)
		g, err := Trace(program, x)
		require.NoError(t, err)
		plain, err := g.Run(x)
		require.NoError(t, err)
		rep, err := g.Fuse(dev)
		require.NoError(t, err)
		require.Equal(t, 1, rep.Epilogues, "seed %d\n%s", seed, g)
		require.Contains(t, g.String(), "fused_"+op+"[")
		_, before := FusionCounts()
		fused, err := g.Run(x)
		require.NoError(t, err)
		_, after := FusionCounts()
		require.Equal(t, before, after, "the fused node ran as one kernel\n%s", g)
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		assert.InDeltaSlice(t, a, b, 1e-4, "seed %d", seed)

		up := randnOn(dev, 40+seed, plain[0].Shape()...)
		grads := func(run func([]*core.Tensor) ([]*core.Tensor, error)) [][]float64 {
			xs := x.Detach().SetRequiresGrad(true)
			w.ZeroGrad()
			out, err := run([]*core.Tensor{xs})
			require.NoError(t, err)
			require.NoError(t, out[0].Backward(up))
			gx, _ := xs.Grad().Float64s()
			gw, _ := w.Grad().Float64s()
			return [][]float64{gx, gw}
		}
		want := grads(program)
		got := grads(func(in []*core.Tensor) ([]*core.Tensor, error) { return g.Run(in...) })
		for k := range want {
			assert.InDeltaSlice(t, want[k], got[k], 1e-3, "seed %d gradient %d", seed, k)
		}
	}
}

// Fusion reaches into loop bodies: an RNN cell h = tanh(h W + x) inside
// ir.Loop becomes one fused matmul per iteration on WebGPU, with the same
// results as the unfused loop.
func TestFusionInsideLoopBodies(t *testing.T) {
	dev := webgpuOrSkip(t)
	w := randnOn(dev, 1, 8, 8)
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		outs, err := Loop(5, []*core.Tensor{in[1]}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
			return []*core.Tensor{c1("tanh", nil, c1("add", nil, c1("matmul", nil, c[0], w), in[0]))}, nil
		})
		return outs, err
	}
	x, h := randnOn(dev, 2, 4, 8), randnOn(dev, 3, 4, 8)
	g, err := Trace(program, x, h)
	require.NoError(t, err)
	plain, err := g.Run(x, h)
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Epilogues, "%s", g)
	assert.Contains(t, g.String(), "fused_matmul[tanh(add($0, $1))]")
	fused, err := g.Run(x, h)
	require.NoError(t, err)
	a, _ := plain[0].Float64s()
	b, _ := fused[0].Float64s()
	assert.InDeltaSlice(t, a, b, 1e-5)
}

// A batched matmul whose epilogue reads scalars (relu's gradient compares
// with 0 and selects 0) folds its batch into rows with the scalars
// broadcast; it used to index a scalar's last dim and panic.
func TestBatchedMatmulEpilogueWithScalarOperands(t *testing.T) {
	dev := webgpuOrSkip(t)
	w := randnOn(dev, 3, 5, 7)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("matmul", nil, in[0], w)
		mask := c1("gt", nil, in[1], core.Scalar(0, core.F32, dev))
		return []*core.Tensor{c1("where", nil, mask, y, core.Scalar(0.5, core.F32, dev))}, nil
	}
	x, e := randnOn(dev, 1, 2, 4, 5), randnOn(dev, 2, 2, 4, 7)
	g, err := Trace(fn, x, e)
	require.NoError(t, err)
	want, err := g.Run(x, e)
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Epilogues, g.String())
	_, before := FusionCounts()
	got, err := g.Run(x, e)
	require.NoError(t, err)
	_, after := FusionCounts()
	require.Equal(t, before, after, "the fused node ran as one kernel")
	assert.InDeltaSlice(t, values(t, want[0]), values(t, got[0]), 1e-5)
}
