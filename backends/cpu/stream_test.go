package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// reductionCases are the streamed kernels with the attributes that steer
// them; axes are added per case.
var reductionCases = []struct {
	op    string
	attrs core.Attrs
	// sums scale a broadcast group by its repeats instead of adding it
	// again, so over a broadcast reduced dim they agree with the copy to
	// rounding, not bit for bit.
	sumLike bool
}{
	{"sum", nil, true}, {"mean", nil, true}, {"prod", nil, true},
	{"max", nil, false}, {"min", nil, false}, {"any", nil, false}, {"all", nil, false},
	{"var", core.Attrs{"correction": 1}, true}, {"std", core.Attrs{"correction": 0}, true},
	{"logsumexp", nil, true},
	{"norm", core.Attrs{"ord": 0.0}, false}, {"norm", core.Attrs{"ord": 1.0}, true},
	{"norm", core.Attrs{"ord": 2.0}, true}, {"norm", core.Attrs{"ord": 3.0}, true},
	{"norm", core.Attrs{"ord": math.Inf(1)}, false}, {"norm", core.Attrs{"ord": math.Inf(-1)}, false},
	{"argmax", nil, false}, {"argmin", nil, false}, {"nonzero", nil, false},
}

// randomView is a strided view of fresh random storage: dims permuted,
// stepped (a slice with a step), some broadcast (stride 0), at an offset.
func randomView(rng *rand.Rand, d core.DType) (view *core.Tensor, bcast []bool) {
	rank := rng.IntN(5)
	shape, steps := make(core.Shape, rank), make([]int, rank)
	bcast = make([]bool, rank)
	for i := range shape {
		shape[i], steps[i], bcast[i] = rng.IntN(5), 1+rng.IntN(3), rng.IntN(4) == 0
		if rng.IntN(6) == 0 {
			shape[i] = 1
		}
	}
	perm := rng.Perm(rank)
	parent := core.Shape{2} // room for an offset
	for _, p := range perm {
		parent = append(parent, max(shape[p]*steps[p], 1))
	}
	vals := make([]float64, parent.Numel())
	special := []float64{0, math.Copysign(0, -1), 1, -1, 2, math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1e300}
	for i := range vals {
		if rng.IntN(8) == 0 {
			vals[i] = special[rng.IntN(len(special))]
		} else {
			vals[i] = math.Round(rng.NormFloat64()*8) / 4
		}
		if !d.IsFloat() && (math.IsNaN(vals[i]) || math.IsInf(vals[i], 0) || math.Abs(vals[i]) > 1e9) {
			vals[i] = 3
		}
	}
	base := core.FromFloat64s(d, parent, vals)
	ps := rowMajor(parent)
	strides := make([]int, rank)
	for j, p := range perm {
		if !bcast[p] {
			strides[p] = ps[j+1] * steps[p]
		}
	}
	return core.NewView(base, shape, strides, rng.IntN(2)*ps[0]), bcast
}

// Streamed reductions over a view give what they give over its contiguous
// copy, bit for bit, unless a sum-like reduction runs over a dim the view
// broadcasts (then it agrees to rounding). The copy is walked densely, the
// view through its strides, broadcast dims and runs split at runLen.
func TestStreamedReductionsEqualTheContiguousCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	for iter := range 400 {
		d := []core.DType{core.F32, core.F64, core.I64, core.I32}[iter%4]
		view, bcast := randomView(rng, d)
		dense := view.Contiguous()
		require.NoError(t, dense.Err())
		for _, c := range reductionCases {
			attrs := c.attrs.Clone()
			var axes []int
			switch {
			case c.op == "nonzero":
			case c.op == "argmax" || c.op == "argmin":
				if view.Rank() > 0 && rng.IntN(2) == 0 {
					axes = []int{rng.IntN(view.Rank())}
					attrs["axis"] = axes[0]
				}
			default:
				for a := range view.Rank() {
					if rng.IntN(2) == 0 {
						axes = append(axes, a)
					}
				}
				if axes != nil || rng.IntN(2) == 0 {
					attrs["axes"] = axes
				}
				if attrs["axes"] == nil {
					axes = nil
					for a := range view.Rank() {
						axes = append(axes, a)
					}
				}
			}
			name := fmt.Sprintf("%d %s%v over %v of %v (strides %v, %s)", iter, c.op, attrs, axes, view.Shape(), view.Strides(), d)
			got, gerr := core.Call(c.op, []*core.Tensor{view}, attrs)
			want, werr := core.Call(c.op, []*core.Tensor{dense}, attrs)
			if werr != nil || gerr != nil {
				assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), name)
				continue
			}
			broadcastReduced := false
			for _, a := range axes {
				broadcastReduced = broadcastReduced || (bcast[a] && view.Shape()[a] > 1)
			}
			requireSameValues(t, want[0], got[0], c.sumLike && broadcastReduced, name)
		}
	}
}

func requireSameValues(t *testing.T, want, got *core.Tensor, close bool, name string) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), name)
	require.Equal(t, want.DType(), got.DType(), name)
	w, err := want.Float64s()
	require.NoError(t, err)
	g, err := got.Float64s()
	require.NoError(t, err)
	for i := range w {
		switch {
		case math.IsNaN(w[i]) && math.IsNaN(g[i]):
		case close && !math.IsInf(w[i], 0):
			require.InDelta(t, w[i], g[i], 1e-6*math.Max(1, math.Abs(w[i])), "%s: element %d", name, i)
		default:
			require.Equal(t, math.Float64bits(w[i]), math.Float64bits(g[i]), "%s: element %d: want %v, got %v", name, i, w[i], g[i])
		}
	}
}

func expandOnes(t *testing.T, d core.DType, shape ...int) *core.Tensor {
	t.Helper()
	x := core.Call1("expand", core.Attrs{"shape": shape}, core.FromFloat64s(d, core.Shape{1}, []float64{1}))
	require.NoError(t, x.Err())
	return x
}

func item(t *testing.T, x *core.Tensor) float64 {
	t.Helper()
	v, err := x.Item()
	require.NoError(t, err)
	return v
}

// The reproducers of issue 26: reductions over a broadcast view of 1e11
// elements used to die with "fatal error: runtime: out of memory". They
// give the answer (in the time of the distinct elements) or, where the
// answer itself does not fit (nonzero's coordinates), an error naming the
// size.
func TestHugeBroadcastViewsReduceWithoutMaterialising(t *testing.T) {
	const n = 100_000_000_000
	y := expandOnes(t, core.F32, n)
	assert.Equal(t, float64(float32(n)), item(t, core.Call1("sum", nil, y)))
	assert.Equal(t, 1.0, item(t, core.Call1("mean", nil, y)))
	assert.Equal(t, 1.0, item(t, core.Call1("max", nil, y)))
	assert.Equal(t, 0.0, item(t, core.Call1("argmax", nil, y)))
	assert.Equal(t, 1.0, item(t, core.Call1("all", nil, y)))
	assert.Equal(t, float64(float32(math.Sqrt(n))), item(t, core.Call1("norm", nil, y)))
	assert.Equal(t, 0.0, item(t, core.Call1("var", nil, y)))
	half := core.Call1("slice", core.Attrs{"step": 2}, y)
	require.NoError(t, half.Err())
	assert.Equal(t, float64(float32(n/2)), item(t, core.Call1("sum", nil, half)))
	assert.Equal(t, float64(n/2), item(t, core.Call1("sum", nil, expandOnes(t, core.I64, n/2))))

	// A view whose element count would overflow an int is refused.
	_, err := core.Call("expand", []*core.Tensor{expandOnes(t, core.F32, 1)}, core.Attrs{"shape": []int{1 << 36, 1 << 30}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too many elements")

	_, err = core.Call("nonzero", []*core.Tensor{y}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nonzero")
	assert.Contains(t, err.Error(), "800000000000 bytes")
}

// A 2^28-element view of a 4 KB vector, summed along the broadcast dim it
// keeps: every element is read, through runs, with no temporary beyond the
// output's.
func TestLargeViewStreamsInBoundedMemory(t *testing.T) {
	vals := make([]float64, 1024)
	for i := range vals {
		vals[i] = float64(i % 7)
	}
	v := core.FromFloat64s(core.F32, core.Shape{1024}, vals)
	const rows = 1 << 18
	x := core.Call1("expand", core.Attrs{"shape": []int{rows, 1024}}, v)
	require.NoError(t, x.Err())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := core.Call1("sum", core.Attrs{"axes": []int{1}}, x)
	require.NoError(t, s.Err())
	runtime.ReadMemStats(&after)
	// The output (1 MB) and its float64 accumulator (2 MB) are allowed; a
	// copy of the view would be 2 GB.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))
	got, err := s.Float32s()
	require.NoError(t, err)
	want := float32(0)
	for _, e := range vals {
		want += float32(e)
	}
	assert.Equal(t, want, got[0])
	assert.Equal(t, want, got[rows-1])
}

// withLimit runs fn with the CPU memory limit set to bytes.
func withLimit(bytes int64, fn func()) {
	maxAllocBytes()
	old := limit
	limit = bytes
	defer func() { limit = old }()
	fn()
}

// A temporary that does not fit is the kernel's error (naming the op, the
// size and the limit), not a crash, and not an "internal error".
func TestOversizedTemporaryIsAnError(t *testing.T) {
	x := expandOnes(t, core.F32, 1<<24) // cumsum widens it: 128 MB of float64
	withLimit(100<<20, func() {
		_, err := core.Call("cumsum", []*core.Tensor{x}, core.Attrs{"axis": 0})
		require.Error(t, err)
		msg := err.Error()
		assert.True(t, strings.HasPrefix(msg, "cumsum: cpu: a temporary of 16777216 float64 elements (134217728 bytes) does not fit"), msg)
		assert.Contains(t, msg, "104857600-byte limit")
		assert.NotContains(t, msg, "internal error")
	})
	// Other panics still reach core's recovery.
	k := guardTemps(func(*core.KernelCall) error { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { _ = k(nil) })
}

// The walk visits every element once in row-major order, whatever the
// merging of dims, and splits long rows at runLen.
func TestWalkVisitsRowMajor(t *testing.T) {
	shape := core.Shape{3, 1, 2, runLen + 5}
	strides := []int{0, 7, runLen + 5, 1}
	w := walk{shape: shape.Clone(), strides: [][]int{strides, rowMajor(shape)}, base: []int{10, 0}}
	w.coalesce()
	require.Equal(t, []int{3, 2 * (runLen + 5)}, w.shape)
	next := 0
	w.runs(func(pos []int, n int) {
		require.LessOrEqual(t, n, runLen)
		require.Equal(t, next, pos[1])
		require.Equal(t, 10+next%(2*(runLen+5)), pos[0])
		next += n
	})
	require.Equal(t, shape.Numel(), next)
}

// Making f32 views contiguous (gatherF32Into's three inner loops: unit
// step, short and long; a transposed view through transposeInto, with
// rows and source rows not multiples of eight, and one large enough to
// split across threads; a general stride) gives the elements the view
// reads, in order: checked against the same view cast to float64.
func TestContiguousCopiesOfF32Views(t *testing.T) {
	randn := func(shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": 7})
	}
	views := map[string]*core.Tensor{
		"heads merged (runs of 8)":    randn(2, 3, 37, 8).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}),
		"heads merged (runs of 24)":   randn(2, 3, 37, 24).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}),
		"map flattened to tokens":     randn(2, 5, 7, 9).Permute(core.Attrs{"dims": []int{0, 2, 3, 1}}),
		"2-D transpose":               randn(33, 19).Permute(core.Attrs{"dims": []int{1, 0}}),
		"tokens unflattened to a map": randn(2, 13, 11, 37).Permute(core.Attrs{"dims": []int{0, 3, 1, 2}}),
		"a UNet's map, in parallel":   randn(2, 64, 64, 64).Permute(core.Attrs{"dims": []int{0, 3, 1, 2}}),
		"every other column":          randn(6, 40).Slice(core.Attrs{"axis": 1, "start": 0, "stop": 40, "step": 2}),
		"transposed, every other row": randn(40, 6).Slice(core.Attrs{"axis": 0, "start": 0, "stop": 40, "step": 2}).Permute(core.Attrs{"dims": []int{1, 0}}),
	}
	for name, v := range views {
		require.False(t, v.IsContiguous(), name)
		got, err := v.Contiguous().Float64s()
		require.NoError(t, err, name)
		want, err := v.Cast(core.F64).Contiguous().Float64s()
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
}
