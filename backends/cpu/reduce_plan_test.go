package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The plan's promise: a reduction gives the same bits on one thread or
// many and for a permuted view as for its contiguous copy, on shapes that
// take both layouts, several blocks per group and split groups; and the
// results stay near float64 references.

func rdPlanInput(rng *rand.Rand, d core.DType, shape ...int) *core.Tensor {
	n := core.Shape(shape).Numel()
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()*3 + 1
	}
	return core.Call1("cast", core.Attrs{"dtype": d}, core.FromSlice(v, core.Shape(shape)))
}

func rdBits(t *testing.T, x *core.Tensor) []uint64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	b := make([]uint64, len(v))
	for i, f := range v {
		b[i] = math.Float64bits(f)
	}
	return b
}

func TestReductionsAreDeterministicAcrossThreadsAndLayouts(t *testing.T) {
	everyLevel(t, reductionsAreDeterministic)
}

func reductionsAreDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 27))
	cases := []struct {
		shape []int
		axes  []int
	}{
		{[]int{37, 5000}, []int{1}},
		{[]int{5000, 37}, []int{0}},
		{[]int{3, 9000}, []int{1}},
		{[]int{9000, 3}, []int{0}},
		{[]int{6, 700, 11}, []int{0, 2}},
		{[]int{6, 700, 11}, []int{1}},
		{[]int{40, 3, 129}, []int{0, 1}},
		{[]int{2, 3, 4100}, nil},
		{[]int{300, 1024}, []int{1}}, // rows of one block each (denseRowSums' direct loop)
		{[]int{64, 100}, []int{1}},   // with a tail past the vector body
	}
	ops := []struct {
		name  string
		attrs core.Attrs
	}{
		{"sum", nil}, {"mean", nil}, {"var", nil}, {"max", nil}, {"logsumexp", nil},
		{"norm", core.Attrs{"ord": 2.0}}, {"norm", core.Attrs{"ord": 3.0}}, {"prod", nil},
	}
	for _, d := range []core.DType{core.F32, core.F64, core.BF16} {
		for _, c := range cases {
			x := rdPlanInput(rng, d, c.shape...)
			perm := make([]int, len(c.shape))
			for i := range perm {
				perm[i] = len(perm) - 1 - i
			}
			// A contiguous tensor of the reversed shape, permuted back: a
			// view of the same logical values with other strides.
			back := core.Call1("permute", core.Attrs{"dims": perm}, x).Contiguous()
			view := core.Call1("permute", core.Attrs{"dims": perm}, back)
			require.False(t, view.IsContiguous())
			for _, op := range ops {
				attrs := core.Attrs{}
				for k, v := range op.attrs {
					attrs[k] = v
				}
				if c.axes != nil {
					attrs["axes"] = c.axes
				}
				var one, many, strided []uint64
				withThreads(1, func() { one = rdBits(t, core.Call1(op.name, attrs, x)) })
				withThreads(4, func() { many = rdBits(t, core.Call1(op.name, attrs, x)) })
				withThreads(3, func() { strided = rdBits(t, core.Call1(op.name, attrs, view)) })
				require.Equal(t, one, many, "%s %v %v axes %v: threads", op.name, d, c.shape, c.axes)
				require.Equal(t, one, strided, "%s %v %v axes %v: view", op.name, d, c.shape, c.axes)
			}
			for _, op := range []string{"argmax", "argmin"} {
				axis := c.axes
				if len(axis) != 1 {
					continue
				}
				a := core.Attrs{"axis": axis[0]}
				want, err := core.Call1(op, a, core.Call1("cast", core.Attrs{"dtype": core.F64}, x)).Int64s()
				require.NoError(t, err)
				got, err := core.Call1(op, a, view).Int64s()
				require.NoError(t, err)
				require.Equal(t, want, got, "%s %v %v", op, d, c.shape)
			}
		}
	}
}

// Sums of long groups (many blocks, split across tasks) against a
// float64 reference.
func TestPlanSumsMatchFloat64(t *testing.T) { everyLevel(t, planSumsMatch) }

func planSumsMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 3, 70000
	x := rdPlanInput(rng, core.F32, rows, cols)
	v, err := x.Float64s()
	require.NoError(t, err)
	x64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, x)
	for _, axes := range [][]int{{1}, {0}, nil} {
		attrs := core.Attrs{}
		if axes != nil {
			attrs["axes"] = axes
		}
		got64, err := core.Call1("sum", attrs, x64).Float64s()
		require.NoError(t, err)
		got32, err := core.Call1("sum", attrs, x).Float64s()
		require.NoError(t, err)
		want, mag := make([]float64, len(got64)), make([]float64, len(got64))
		for i, f := range v {
			o := 0
			if axes != nil && axes[0] == 1 {
				o = i / cols
			} else if axes != nil {
				o = i % cols
			}
			want[o] += f
			mag[o] += math.Abs(f)
		}
		for o := range got64 {
			require.InDelta(t, want[o], got64[o], 1e-13*mag[o], "f64 axes %v output %d", axes, o)
			require.InDelta(t, want[o], got32[o], 1e-7*math.Abs(want[o])+1e-30, "f32 axes %v output %d", axes, o)
		}
	}
}

// A float32 sum's error must not grow with the length: positive values,
// where a running float32 sum's error grows with n, summed whole and by
// rows, stay within the kernels' per-group bound (f32SumTol of the
// magnitudes, which here are the sum) plus the output's own rounding at
// every size.
func TestSumAccuracyDoesNotFallWithSize(t *testing.T) { everyLevel(t, sumAccuracyBySize) }

func sumAccuracyBySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for n := 1 << 10; n <= 1<<22; n <<= 3 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.Float64())
		}
		var want float64
		for _, f := range v { // float64: within n·2^-53 of exact, far inside the bound
			want += float64(f)
		}
		x := core.FromSlice(v, core.Shape{n})
		got, err := core.Call1("sum", nil, x).Float64s()
		require.NoError(t, err)
		tol := (f32SumTol + 0x1p-24) * want
		require.InDelta(t, want, got[0], tol, "n=%d", n)
		rows, err := core.Call1("sum", core.Attrs{"axes": []int{1}}, x.Reshape(core.Shape{n / 1024, 1024})).Float64s()
		require.NoError(t, err)
		for r, s := range rows {
			var w float64
			for _, f := range v[r*1024 : (r+1)*1024] {
				w += float64(f)
			}
			require.InDelta(t, w, s, (f32SumTol+0x1p-24)*w, "n=%d row %d", n, r)
		}
	}
}
