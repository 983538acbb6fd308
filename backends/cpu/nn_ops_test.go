package cpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Focused tests of the neural-network ops: hand-computed values, a few
// gradients, agreement between the fast and the general paths, and errors.

func nnF64(vals []float64, shape ...int) *core.Tensor {
	return core.FromFloat64s(core.F64, core.Shape(shape), vals)
}

func nnF32(vals []float64, shape ...int) *core.Tensor {
	return core.FromFloat64s(core.F32, core.Shape(shape), vals)
}

func nnI64(vals []int64, shape ...int) *core.Tensor { return core.FromSlice(vals, core.Shape(shape)) }

func nnRun1(t *testing.T, op string, a core.Attrs, in ...*core.Tensor) []float64 {
	t.Helper()
	return f64s(t, callN(t, op, a, in...)[0])
}

// nnErr checks that a call fails with an error mentioning want (no panic).
func nnErr(t *testing.T, want, op string, a core.Attrs, in ...*core.Tensor) {
	t.Helper()
	_, err := core.Call(op, in, a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, err.Error(), "internal error")
}

// nnRandom is a deterministic pseudo-random f64 slice in [-2, 2).
func nnRandom(n int, seed uint64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 4*numerics.PhiloxUniform(seed, 0, i) - 2
	}
	return out
}

// nnGrad returns d/dx of sum(f(x) * w) for a fixed weighting w.
func nnGrad(t *testing.T, x *core.Tensor, w *core.Tensor, f func(*core.Tensor) *core.Tensor) []float64 {
	t.Helper()
	x.SetRequiresGrad(true)
	loss := core.Call1("sum", nil, core.Call1("mul", nil, f(x), w))
	require.NoError(t, loss.Err())
	require.NoError(t, loss.Backward())
	require.NotNil(t, x.Grad())
	return f64s(t, x.Grad())
}

func TestSoftmaxHandValues(t *testing.T) {
	x := nnF64([]float64{1, 2, 3, 1000, 1001, 1002}, 2, 3)
	want := []float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748219}
	got := nnRun1(t, "softmax", nil, x)
	assert.InDeltaSlice(t, append(want, want...), got, 1e-15, "softmax is shift invariant, even at 1000")
	lg := nnRun1(t, "log_softmax", nil, x)
	for i, v := range lg {
		assert.InDelta(t, math.Log(want[i%3]), v, 1e-13)
	}
	cols := nnRun1(t, "softmax", core.Attrs{"axis": 0}, nnF64([]float64{0, 5, 0, 5}, 2, 2))
	assert.InDeltaSlice(t, []float64{0.5, 0.5, 0.5, 0.5}, cols, 1e-15)
	assert.Equal(t, []float64{1}, nnRun1(t, "softmax", nil, core.Scalar(3, core.F32)))
}

func TestSoftmaxNaNAndInfinities(t *testing.T) {
	inf := math.Inf(1)
	got := nnRun1(t, "softmax", nil, nnF32([]float64{math.NaN(), 1, 2, -inf, 0, 0, inf, 1, 0}, 3, 3))
	for i := 0; i < 3; i++ {
		assert.True(t, math.IsNaN(got[i]), "a NaN makes its row NaN")
	}
	assert.Equal(t, []float64{0, 0.5, 0.5}, got[3:6], "-inf gets probability 0")
	assert.True(t, math.IsNaN(got[6]) && math.IsNaN(got[7]), "+inf is inf-inf: NaN, as in PyTorch")
}

func TestSoftmaxFastPathMatchesGeneral(t *testing.T) {
	vals := nnRandom(64*300, 3)
	for i := range vals {
		vals[i] *= 8
	}
	for _, op := range []string{"softmax", "log_softmax"} {
		fast := nnRun1(t, op, nil, nnF32(vals, 64, 300))
		general := nnRun1(t, op, nil, nnF64(vals, 64, 300))
		strided := callN(t, "transpose", nil, callN(t, op, core.Attrs{"axis": 0}, callN(t, "transpose", nil, nnF32(vals, 64, 300))[0])[0])[0]
		sv := f64s(t, strided)
		for i := range general {
			require.InDelta(t, general[i], fast[i], 1e-6*(1+math.Abs(general[i])), "%s element %d", op, i)
			require.InDelta(t, general[i], sv[i], 1e-6*(1+math.Abs(general[i])), "%s strided element %d", op, i)
		}
	}
}

func TestSoftmaxGradients(t *testing.T) {
	xv, wv := []float64{0.3, -1, 2, 0.5}, []float64{1, -2, 0.5, 3}
	y := nnRun1(t, "softmax", nil, nnF64(xv, 4))
	var s float64
	for i := range y {
		s += wv[i] * y[i]
	}
	got := nnGrad(t, nnF64(xv, 4), nnF64(wv, 4), func(x *core.Tensor) *core.Tensor { return core.Call1("softmax", nil, x) })
	for i := range y {
		assert.InDelta(t, y[i]*(wv[i]-s), got[i], 1e-14)
	}
	var wsum float64
	for _, w := range wv {
		wsum += w
	}
	got = nnGrad(t, nnF32(xv, 4), nnF32(wv, 4), func(x *core.Tensor) *core.Tensor { return core.Call1("log_softmax", nil, x) })
	for i := range y {
		assert.InDelta(t, wv[i]-y[i]*wsum, got[i], 1e-6)
	}
}

func TestDropoutMaskAndScale(t *testing.T) {
	const n, p, seed, offset = 2501, 0.3, 42, 7 // chunks of 1024 elements and a ragged end
	x := nnF32(make([]float64, n), n)
	x = core.Call1("ones_like", nil, x)
	a := core.Attrs{"p": p, "seed": seed, "offset": offset}
	got := nnRun1(t, "dropout", a, x)
	kept := 0
	for i, v := range got {
		if numerics.PhiloxUniform(seed, offset, i) >= p {
			assert.InDelta(t, 1/(1-p), v, 1e-6, "element %d", i)
			kept++
		} else {
			assert.Zero(t, v, "element %d", i)
		}
	}
	assert.InDelta(t, (1-p)*n, kept, 60)
	assert.Equal(t, got, nnRun1(t, "dropout", a, x), "same seed and offset, same mask")
	g := nnGrad(t, nnF64(make([]float64, n), n), core.Call1("ones_like", nil, x), func(v *core.Tensor) *core.Tensor {
		return core.Call1("dropout", a, v)
	})
	assert.InDeltaSlice(t, got, g, 1e-6, "the gradient is the same mask and scale")
	assert.Equal(t, f64s(t, x), nnRun1(t, "dropout", core.Attrs{"p": p, "training": false}, x))
	for _, v := range nnRun1(t, "dropout", core.Attrs{"p": 1.0}, x) {
		assert.Zero(t, v)
	}
	nnErr(t, "p must be in [0, 1]", "dropout", core.Attrs{"p": 1.5}, x)
	nnErr(t, "dtype", "dropout", nil, nnI64([]int64{1, 2}, 2))
}

func TestDropoutDrawsFreshMasksFromTheGlobalGenerator(t *testing.T) {
	seed, offset := core.RNGState()
	defer core.SetRNGState(seed, offset)
	core.ManualSeed(9)
	x := core.Call1("ones_like", nil, nnF32(make([]float64, 64), 64))
	first := nnRun1(t, "dropout", nil, x)
	second := nnRun1(t, "dropout", nil, x)
	assert.NotEqual(t, first, second, "each call advances the generator")
	core.ManualSeed(9)
	assert.Equal(t, first, nnRun1(t, "dropout", nil, x), "reseeding repeats the sequence")
}

func TestLayerNormHandValues(t *testing.T) {
	x := nnF64([]float64{1, 2, 3, 4, 10, 10, 10, 10}, 2, 4)
	r := 1 / math.Sqrt(1.25+1e-5)
	want := []float64{-1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r, 0, 0, 0, 0}
	assert.InDeltaSlice(t, want, nnRun1(t, "layer_norm", core.Attrs{"normalized_shape": []int{4}}, x), 1e-14)
	w, b := nnF64([]float64{1, 2, 3, 4}, 4), nnF64([]float64{0, 0, 0, 1}, 4)
	got := nnRun1(t, "layer_norm", core.Attrs{"normalized_shape": []int{4}}, x, w, b)
	for i := range want {
		assert.InDelta(t, want[i]*float64(i%4+1)+float64(i%4/3), got[i], 1e-14)
	}
	whole := nnRun1(t, "layer_norm", core.Attrs{"normalized_shape": []int{2, 4}, "eps": 0}, x)
	var sum, sq float64
	for _, v := range whole {
		sum += v
		sq += v * v
	}
	assert.InDelta(t, 0, sum, 1e-12)
	assert.InDelta(t, 8, sq, 1e-12, "normalising over both dims gives unit variance")
}

func TestLayerNormFastPathMatchesGeneral(t *testing.T) {
	xs, ws, bs := nnRandom(32*96, 1), nnRandom(96, 2), nnRandom(96, 3)
	a := core.Attrs{"normalized_shape": []int{96}}
	fast := nnRun1(t, "layer_norm", a, nnF32(xs, 32, 96), nnF32(ws, 96), nnF32(bs, 96))
	general := nnRun1(t, "layer_norm", a, nnF64(xs, 32, 96), nnF64(ws, 96), nnF64(bs, 96))
	assert.InDeltaSlice(t, general, fast, 2e-6)
}

func TestLayerNormGradients(t *testing.T) {
	xv := nnRandom(12, 5)
	a := core.Attrs{"normalized_shape": []int{4}}
	ones := nnF64([]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 3, 4)
	gx := nnGrad(t, nnF64(xv, 3, 4), ones, func(x *core.Tensor) *core.Tensor { return core.Call1("layer_norm", a, x) })
	assert.InDeltaSlice(t, make([]float64, 12), gx, 1e-12, "a normalised row always sums to 0")
	w, b := nnF64([]float64{1, 2, 3, 4}, 4), nnF64([]float64{0, 0, 0, 0}, 4)
	b.SetRequiresGrad(true)
	w.SetRequiresGrad(true)
	loss := core.Call1("sum", nil, core.Call1("layer_norm", a, nnF64(xv, 3, 4), w, b))
	require.NoError(t, loss.Backward())
	assert.Equal(t, []float64{3, 3, 3, 3}, f64s(t, b.Grad()), "each bias feeds one element per row")
	dw := f64s(t, w.Grad())
	var total float64
	for _, v := range dw {
		total += v
	}
	assert.InDelta(t, 0, total, 1e-12, "dweight sums the normalised values, which cancel per row")
}

func TestRMSNorm(t *testing.T) {
	x := nnF64([]float64{3, 4, 0, 0}, 2, 2)
	got := nnRun1(t, "rms_norm", core.Attrs{"normalized_shape": []int{2}}, x)
	s := 1 / math.Sqrt(12.5+0x1p-52)
	assert.InDeltaSlice(t, []float64{3 * s, 4 * s, 0, 0}, got, 1e-15, "default eps is the dtype's machine epsilon")
	got = nnRun1(t, "rms_norm", core.Attrs{"normalized_shape": []int{2}, "eps": 0.5}, x, nnF64([]float64{2, -1}, 2))
	s = 1 / math.Sqrt(13)
	assert.InDeltaSlice(t, []float64{6 * s, -4 * s, 0, 0}, got, 1e-15)
	assert.InDelta(t, 0x1p-10, oprules.RMSNormEps(core.Attrs{}, core.F16), 0)
	fast := nnRun1(t, "rms_norm", core.Attrs{"normalized_shape": []int{48}}, nnF32(nnRandom(480, 8), 10, 48))
	general := nnRun1(t, "rms_norm", core.Attrs{"normalized_shape": []int{48}, "eps": 0x1p-23}, nnF64(nnRandom(480, 8), 10, 48))
	assert.InDeltaSlice(t, general, fast, 2e-6)
}

func TestGroupNormMatchesLayerNormOfGroups(t *testing.T) {
	xv := nnRandom(2*6*5, 11)
	got := nnRun1(t, "group_norm", core.Attrs{"num_groups": 3}, nnF64(xv, 2, 6, 5))
	want := nnRun1(t, "layer_norm", core.Attrs{"normalized_shape": []int{10}}, nnF64(xv, 2, 3, 10))
	assert.InDeltaSlice(t, want, got, 1e-14)
	w := nnF64([]float64{1, 2, 3, 4, 5, 6}, 6)
	affine := nnRun1(t, "group_norm", core.Attrs{"num_groups": 3}, nnF64(xv, 2, 6, 5), w)
	for i := range affine {
		assert.InDelta(t, want[i]*float64(i/5%6+1), affine[i], 1e-13, "weight is per channel")
	}
}

func TestBatchNormTrainingAndEval(t *testing.T) {
	x := nnF64([]float64{1, 2, 3, 6}, 2, 2)
	rm, rv := nnF64([]float64{0, 1}, 2), nnF64([]float64{1, 1}, 2)
	outs := callN(t, "batch_norm", core.Attrs{"training": true, "eps": 0}, x, rm, rv)
	assert.InDeltaSlice(t, []float64{-1, -1, 1, 1}, f64s(t, outs[0]), 1e-15)
	// Batch means 2 and 4; unbiased variances 2 and 8.
	assert.InDeltaSlice(t, []float64{0.2, 1.3}, f64s(t, outs[1]), 1e-15)
	assert.InDeltaSlice(t, []float64{0.9 + 0.2, 0.9 + 0.8}, f64s(t, outs[2]), 1e-15)
	outs = callN(t, "batch_norm", core.Attrs{"training": true}, x)
	assert.Equal(t, []float64{2, 4}, f64s(t, outs[1]), "no running stats: the batch mean")
	assert.Equal(t, []float64{2, 8}, f64s(t, outs[2]), "and the unbiased batch variance")
	outs = callN(t, "batch_norm", core.Attrs{"eps": 0}, x, rm, nnF64([]float64{4, 1}, 2), nil, nnF64([]float64{1, 0}, 2))
	assert.InDeltaSlice(t, []float64{1.5, 1, 2.5, 5}, f64s(t, outs[0]), 1e-15)
	assert.Equal(t, []float64{0, 1}, f64s(t, outs[1]), "eval returns the running stats unchanged")
}

func TestBatchNormGradientThroughRunningStats(t *testing.T) {
	// d/dx of sum(new_running_mean) is momentum/count for every element.
	x := nnF64(nnRandom(6, 4), 3, 2)
	x.SetRequiresGrad(true)
	outs := callN(t, "batch_norm", core.Attrs{"training": true, "momentum": 0.25}, x, nnF64([]float64{0, 0}, 2), nnF64([]float64{1, 1}, 2))
	loss := core.Call1("sum", nil, outs[1])
	require.NoError(t, loss.Backward())
	assert.InDeltaSlice(t, []float64{0.25 / 3, 0.25 / 3, 0.25 / 3, 0.25 / 3, 0.25 / 3, 0.25 / 3}, f64s(t, x.Grad()), 1e-15)
}

func TestAttentionHandValues(t *testing.T) {
	q := nnF64([]float64{1, 0, 0, 1}, 2, 2)
	k := nnF64([]float64{1, 0, 1, 0, 0, 1}, 3, 2)
	v := nnF64([]float64{1, 10, 2, 20, 3, 30}, 3, 2)
	got := nnRun1(t, "scaled_dot_product_attention", core.Attrs{"scale": 0.0}, q, k, v)
	assert.InDeltaSlice(t, []float64{2, 20, 2, 20}, got, 1e-14, "scale 0 averages the values")
	got = nnRun1(t, "scaled_dot_product_attention", core.Attrs{"is_causal": true}, q, k, v)
	assert.InDeltaSlice(t, []float64{1, 10, 1.5, 15}, got, 1e-14, "row 0 sees key 0 only, row 1 two equal scores")
	got = nnRun1(t, "scaled_dot_product_attention", nil, q, k, v)
	e := math.Exp(1 / math.Sqrt2)
	assert.InDelta(t, (e+2*e+3)/(2*e+1), got[0], 1e-14)
	assert.InDelta(t, (1+2+3*e)/(2+e), got[2], 1e-14)
	mask := core.FromSlice([]bool{false, false, false, true, true, true}, core.Shape{2, 3})
	got = nnRun1(t, "scaled_dot_product_attention", core.Attrs{"scale": 0.0}, q, k, v, mask)
	assert.Equal(t, []float64{0, 0}, got[:2], "a fully masked row gives zeros")
	qg := nnF64([]float64{1, 0, 0, 1}, 2, 2)
	g := nnGrad(t, qg, core.Call1("ones_like", nil, nnF64(got, 2, 2)), func(x *core.Tensor) *core.Tensor {
		return core.Call1("scaled_dot_product_attention", nil, x, k, v, mask)
	})
	assert.Equal(t, []float64{0, 0}, g[:2], "and no gradient")
}

func TestAttentionBroadcastsBatchDims(t *testing.T) {
	qv, kv, vv := nnRandom(2*3*4, 1), nnRandom(5*4, 2), nnRandom(5*2, 3)
	got := f64s(t, callN(t, "scaled_dot_product_attention", nil, nnF32(qv, 2, 3, 4), nnF32(kv, 1, 5, 4), nnF32(vv, 5, 2))[0])
	require.Len(t, got, 2*3*2)
	for b := 0; b < 2; b++ {
		one := nnRun1(t, "scaled_dot_product_attention", nil, nnF32(qv[b*12:(b+1)*12], 3, 4), nnF32(kv, 5, 4), nnF32(vv, 5, 2))
		assert.InDeltaSlice(t, one, got[b*6:(b+1)*6], 1e-6)
	}
}

func TestCrossEntropyHandValues(t *testing.T) {
	logits := nnF64(make([]float64, 8), 2, 4)
	loss := nnRun1(t, "cross_entropy", nil, logits, nnI64([]int64{2, 0}, 2))
	assert.InDelta(t, math.Log(4), loss[0], 1e-15)
	loss = nnRun1(t, "cross_entropy", core.Attrs{"label_smoothing": 0.3}, logits, nnI64([]int64{2, 0}, 2))
	assert.InDelta(t, math.Log(4), loss[0], 1e-15, "smoothing towards uniform changes nothing for uniform logits")
	x := nnF64([]float64{2, 0, 0, 0, 3, 1}, 2, 3)
	oneHot := nnF64([]float64{1, 0, 0, 0, 0, 1}, 2, 3)
	byIndex := nnRun1(t, "cross_entropy", core.Attrs{"reduction": "none"}, x, nnI64([]int64{0, 2}, 2))
	byProbs := nnRun1(t, "cross_entropy", core.Attrs{"reduction": "none"}, x, oneHot)
	assert.InDeltaSlice(t, byIndex, byProbs, 1e-15)
	ignored := nnRun1(t, "cross_entropy", nil, x, nnI64([]int64{-100, -100}, 2))
	assert.True(t, math.IsNaN(ignored[0]), "the mean over no targets is NaN, as in PyTorch")
	w := nnF64([]float64{1, 2, 3}, 3)
	weighted := nnRun1(t, "cross_entropy", nil, x, nnI64([]int64{0, 2}, 2), w)
	assert.InDelta(t, (byIndex[0]+3*byIndex[1])/4, weighted[0], 1e-15, "the weighted mean divides by the weights")
}

func TestCrossEntropyGradientIsSoftmaxMinusTarget(t *testing.T) {
	xv := []float64{0.5, -1, 2, 0, 1, 1}
	p := nnRun1(t, "softmax", nil, nnF64(xv, 2, 3))
	up := nnF64([]float64{1}, 1)
	g := nnGrad(t, nnF64(xv, 2, 3), up.Reshape(core.Shape{}), func(x *core.Tensor) *core.Tensor {
		return core.Call1("cross_entropy", nil, x, nnI64([]int64{2, 0}, 2))
	})
	want := []float64{p[0] / 2, p[1] / 2, (p[2] - 1) / 2, (p[3] - 1) / 2, p[4] / 2, p[5] / 2}
	assert.InDeltaSlice(t, want, g, 1e-15)
}

func TestNLLLoss(t *testing.T) {
	lp := nnF64([]float64{-1, -2, -3, -4, -5, -6}, 3, 2)
	assert.Equal(t, []float64{1, 4, 5}, nnRun1(t, "nll_loss", core.Attrs{"reduction": "none"}, lp, nnI64([]int64{0, 1, 0}, 3)))
	got := nnRun1(t, "nll_loss", core.Attrs{"ignore_index": 1}, lp, nnI64([]int64{0, 1, 0}, 3), nnF64([]float64{2, 7}, 2))
	assert.InDelta(t, (2*1+2*5)/4.0, got[0], 1e-15)
	unbatched := nnRun1(t, "nll_loss", nil, nnF64([]float64{-1, -2}, 2), nnI64([]int64{1}))
	assert.Equal(t, []float64{2}, unbatched)
}

func TestPointwiseLosses(t *testing.T) {
	x, y := nnF64([]float64{1, -2, 0.5, 3}, 4), nnF64([]float64{0, 0, 0, 0}, 4)
	assert.InDelta(t, (1+4+0.25+9)/4.0, nnRun1(t, "mse_loss", nil, x, y)[0], 1e-15)
	assert.InDelta(t, 6.5, nnRun1(t, "l1_loss", core.Attrs{"reduction": "sum"}, x, y)[0], 1e-15)
	assert.Equal(t, []float64{0.5, 1.5, 0.125, 2.5}, nnRun1(t, "smooth_l1_loss", core.Attrs{"reduction": "none"}, x, y))
	assert.Equal(t, []float64{0.75, 1.75, 0.25, 2.75}, nnRun1(t, "smooth_l1_loss", core.Attrs{"reduction": "none", "beta": 0.5}, x, y))
	ones := nnF64([]float64{1, 1, 1, 1}, 4)
	for op, want := range map[string][]float64{"mse_loss": {2, -4, 1, 6}, "l1_loss": {1, -1, 1, 1}, "smooth_l1_loss": {1, -1, 0.5, 1}} {
		g := nnGrad(t, nnF64([]float64{1, -2, 0.5, 3}, 4), ones, func(v *core.Tensor) *core.Tensor {
			return core.Call1(op, core.Attrs{"reduction": "none"}, v, y)
		})
		assert.Equal(t, want, g, op)
	}
	bcast := nnRun1(t, "mse_loss", core.Attrs{"reduction": "none"}, nnF32([]float64{1, 2, 3, 4}, 2, 2), nnF64([]float64{1, 0}, 2))
	assert.Equal(t, []float64{0, 4, 4, 16}, bcast, "target broadcasts; f32 with f64 promotes")
	nan := nnRun1(t, "mse_loss", nil, nnF32(nil, 0), nnF32(nil, 0))
	assert.True(t, math.IsNaN(nan[0]), "the mean of no elements is NaN")
}

func TestBCEWithLogits(t *testing.T) {
	x, y := nnF64([]float64{0, 0, 100, -100}, 4), nnF64([]float64{0, 1, 1, 1}, 4)
	got := nnRun1(t, "binary_cross_entropy_with_logits", core.Attrs{"reduction": "none"}, x, y)
	assert.InDeltaSlice(t, []float64{math.Log(2), math.Log(2), 0, 100}, got, 1e-12, "stable at large logits")
	pw := nnF64([]float64{3}, 1)
	got = nnRun1(t, "binary_cross_entropy_with_logits", core.Attrs{"reduction": "none"}, x, y, nil, pw)
	assert.InDeltaSlice(t, []float64{math.Log(2), 3 * math.Log(2), 0, 300}, got, 1e-12, "pos_weight scales positive targets")
	g := nnGrad(t, nnF64([]float64{0, 0, 100, -100}, 4), nnF64([]float64{1, 1, 1, 1}, 4), func(v *core.Tensor) *core.Tensor {
		return core.Call1("binary_cross_entropy_with_logits", core.Attrs{"reduction": "none"}, v, y)
	})
	assert.InDeltaSlice(t, []float64{0.5, -0.5, 0, -1}, g, 1e-12, "sigmoid(x) - target")
}

func TestNNOpsRejectBadInputs(t *testing.T) {
	x := nnF32(nnRandom(12, 1), 3, 4)
	ints := nnI64([]int64{1, 2, 3}, 3)
	nnErr(t, "axis 2 out of range", "softmax", core.Attrs{"axis": 2}, x)
	nnErr(t, "dtype i64", "log_softmax", nil, ints)
	nnErr(t, "not the trailing dims", "layer_norm", core.Attrs{"normalized_shape": []int{3}}, x)
	nnErr(t, "at least one dim", "layer_norm", core.Attrs{"normalized_shape": []int{}}, x)
	nnErr(t, "weight has shape [3], want [4]", "layer_norm", core.Attrs{"normalized_shape": []int{4}}, x, nnF32([]float64{1, 1, 1}, 3))
	nnErr(t, "weight has dtype f64", "rms_norm", core.Attrs{"normalized_shape": []int{4}}, x, nnF64([]float64{1, 1, 1, 1}, 4))
	nnErr(t, "missing required attribute", "layer_norm", nil, x)
	nnErr(t, "num_groups 3 must be positive and divide the 4 channels", "group_norm", core.Attrs{"num_groups": 3}, x)
	nnErr(t, "[N, C, ...]", "group_norm", core.Attrs{"num_groups": 1}, nnF32([]float64{1, 2}, 2))
	nnErr(t, "required when training is false", "batch_norm", nil, x)
	nnErr(t, "both running_mean and running_var", "batch_norm", core.Attrs{"training": true}, x, nnF32([]float64{0, 0, 0, 0}, 4))
	nnErr(t, "more than 1 value per channel", "batch_norm", core.Attrs{"training": true}, nnF32([]float64{1, 2}, 1, 2))
	nnErr(t, "query dim 4 differs from key dim 3", "scaled_dot_product_attention", nil, x, nnF32(nnRandom(6, 2), 2, 3), nnF32(nnRandom(6, 2), 2, 3))
	nnErr(t, "not both", "scaled_dot_product_attention", core.Attrs{"is_causal": true}, x, x, x, core.FromSlice(make([]bool, 9), core.Shape{3, 3}))
	nnErr(t, "does not broadcast", "scaled_dot_product_attention", nil, x, x, x, core.FromSlice(make([]bool, 6), core.Shape{2, 3}))
	nnErr(t, "class targets have shape [4], want [3]", "cross_entropy", nil, x, nnI64([]int64{0, 1, 2, 3}, 4))
	nnErr(t, "out of range [0, 4)", "cross_entropy", nil, x, nnI64([]int64{0, 4, 1}, 3))
	nnErr(t, "out of range [0, 4)", "nll_loss", nil, x, nnI64([]int64{0, -1, 1}, 3))
	nnErr(t, "label_smoothing must be in [0, 1]", "cross_entropy", core.Attrs{"label_smoothing": 1.5}, x, ints)
	nnErr(t, "dtype bool", "cross_entropy", nil, x, core.FromSlice([]bool{true, false, true}, core.Shape{3}))
	nnErr(t, "(target) has dtype f32, want one of [i64", "nll_loss", nil, x, x)
	nnErr(t, "want one of [mean sum none]", "mse_loss", core.Attrs{"reduction": "avg"}, x, x)
	nnErr(t, "beta must be non-negative", "smooth_l1_loss", core.Attrs{"beta": -1.0}, x, x)
	nnErr(t, "cannot be broadcast", "l1_loss", nil, x, nnF32([]float64{1, 2, 3}, 3))
	nnErr(t, "targets [4] f32 must match input [3 4]", "binary_cross_entropy_with_logits", nil, x, nnF32([]float64{1, 2, 3, 4}, 4))
	nnErr(t, "pos_weight of shape [3] does not broadcast", "binary_cross_entropy_with_logits", nil, x, x, nil, nnF32([]float64{1, 2, 3}, 3))
}
