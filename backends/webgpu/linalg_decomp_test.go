package webgpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The factorisation kernels (one workgroup per matrix) on sizes past the
// reference samples': matrices with more rows than a workgroup has threads,
// batches of many small matrices, full SVD factors of tall and wide
// matrices. Each is held to the CPU's f64 result, or, where f32 rounding
// moves individual elements of an eigenvector or singular vector more than
// the values themselves, to the properties the standard promises
// (reconstruction, orthonormal columns, the values). The largest errors
// are logged.

// maxDiff is the largest |a - b| over two tensors of the same shape.
func maxDiff(t *testing.T, a, b *core.Tensor) float64 {
	t.Helper()
	av, bv := reftest.Values(t, a, b)
	worst := 0.0
	for i := range av {
		worst = math.Max(worst, math.Abs(av[i]-bv[i]))
		if math.IsNaN(av[i]) != math.IsNaN(bv[i]) {
			return math.Inf(1)
		}
	}
	return worst
}

func mat(shape core.Shape, seed uint64, f func(v []float64)) *core.Tensor {
	v := randn(shape, seed)
	if f != nil {
		f(v)
	}
	return core.FromFloat64s(core.F32, shape, v, core.CPU)
}

// wellConditioned is randn/sqrt(n) + 3 I over the last two dims.
func wellConditioned(shape core.Shape, seed uint64) *core.Tensor {
	n := shape[len(shape)-1]
	return mat(shape, seed, func(v []float64) {
		for i := range v {
			v[i] /= math.Sqrt(float64(n))
			if (i/n)%n == i%n {
				v[i] += 3
			}
		}
	})
}

func call(t *testing.T, op string, a core.Attrs, ins ...*core.Tensor) []*core.Tensor {
	t.Helper()
	outs, err := core.Call(op, ins, a)
	require.NoError(t, err, op)
	return outs
}

func toGPU(ts ...*core.Tensor) []*core.Tensor {
	out := make([]*core.Tensor, len(ts))
	for i, x := range ts {
		out[i] = x.To(gpu)
	}
	return out
}

func back(t *core.Tensor) *core.Tensor { return t.To(core.CPU) }

func mm(a, b *core.Tensor) *core.Tensor { return core.Call1("matmul", nil, a, b) }
func tr(a *core.Tensor) *core.Tensor    { return core.Call1("transpose", nil, a) }

// orthonormality is max |QᵀQ - I| over the columns of q.
func orthonormality(t *testing.T, q *core.Tensor) float64 {
	n := q.Shape()[q.Rank()-1]
	return maxDiff(t, mm(tr(q), q), core.Call1("expand", core.Attrs{"shape": []int(append(q.Shape()[:q.Rank()-2].Clone(), n, n))},
		core.Call1("eye", core.Attrs{"n": n, "device": "cpu"})))
}

func TestDirectFactorisationsMatchCPU(t *testing.T) {
	needGPU(t)
	for _, c := range []struct {
		name string
		a, b core.Shape
	}{{"one", core.Shape{1, 1}, core.Shape{1, 1}}, {"rows_past_workgroup", core.Shape{70, 70}, core.Shape{70, 5}},
		{"many_small", core.Shape{300, 3, 3}, core.Shape{300, 3, 2}}} {
		t.Run("solve_"+c.name, func(t *testing.T) {
			a, b := wellConditioned(c.a, 1), mat(c.b, 2, nil)
			want := call(t, "_solve", nil, a, b)[0]
			g := toGPU(a, b)
			d := maxDiff(t, back(call(t, "_solve", nil, g[0], g[1])[0]), want)
			t.Logf("max |X_gpu - X_cpu| = %.2g", d)
			require.Less(t, d, 1e-4)
			s, l := call(t, "slogdet", nil, a), call(t, "slogdet", nil, g[0])
			require.Zero(t, maxDiff(t, back(l[0]), s[0]), "signs")
			d = maxDiff(t, back(l[1]), s[1])
			t.Logf("max |logabsdet_gpu - logabsdet_cpu| = %.2g", d)
			require.Less(t, d, 1e-4*float64(c.a[len(c.a)-1]))
		})
	}
	for _, n := range []int{1, 9, 70} {
		t.Run("cholesky", func(t *testing.T) {
			x := mat(core.Shape{3, n, n}, 3, nil)
			a := core.Call1("add", nil, core.Call1("div", nil, mm(x, tr(x)), core.Scalar(float64(n), core.F32, core.CPU)),
				core.Call1("eye", core.Attrs{"n": n, "device": "cpu"}))
			for _, upper := range []bool{false, true} {
				want := call(t, "cholesky", core.Attrs{"upper": upper}, a)[0]
				d := maxDiff(t, back(call(t, "cholesky", core.Attrs{"upper": upper}, toGPU(a)[0])[0]), want)
				t.Logf("n=%d upper=%v: max |L_gpu - L_cpu| = %.2g", n, upper, d)
				require.Less(t, d, 1e-4)
			}
		})
	}
	for _, s := range []core.Shape{{70, 40}, {40, 70}, {200, 5, 3}} {
		t.Run("qr", func(t *testing.T) {
			a := mat(s, 4, nil)
			for _, mode := range []string{"reduced", "complete"} {
				want, got := call(t, "qr", core.Attrs{"mode": mode}, a), call(t, "qr", core.Attrs{"mode": mode}, toGPU(a)[0])
				dq, dr := maxDiff(t, back(got[0]), want[0]), maxDiff(t, back(got[1]), want[1])
				t.Logf("%v %s: max |Q_gpu - Q_cpu| = %.2g, |R_gpu - R_cpu| = %.2g", s, mode, dq, dr)
				require.Less(t, dq, 1e-4)
				require.Less(t, dr, 1e-4)
			}
		})
	}
}

func TestJacobiFactorisationsHoldTheirPromises(t *testing.T) {
	needGPU(t)
	for _, s := range []core.Shape{{40, 40}, {500, 4, 4}} {
		t.Run("eigh", func(t *testing.T) {
			x := mat(s, 5, nil)
			a := core.Call1("add", nil, x, tr(x)) // symmetric, so the reconstruction is of a itself
			want := call(t, "eigh", nil, a)
			got := call(t, "eigh", nil, toGPU(a)[0])
			lam, v := back(got[0]), back(got[1])
			dl := maxDiff(t, lam, want[0])
			rec := maxDiff(t, mm(core.Call1("mul", nil, v, core.Call1("unsqueeze", core.Attrs{"axis": -2}, lam)), tr(v)), a)
			orth := orthonormality(t, v)
			t.Logf("%v: max |λ_gpu - λ_cpu| = %.2g, |V Λ Vᵀ - A| = %.2g, |VᵀV - I| = %.2g", s, dl, rec, orth)
			require.Less(t, dl, 1e-4)
			require.Less(t, rec, 1e-4)
			require.Less(t, orth, 1e-5)
		})
	}
	for _, c := range []struct {
		s    core.Shape
		full bool
	}{{core.Shape{70, 24}, true}, {core.Shape{70, 24}, false}, {core.Shape{20, 36}, true}, {core.Shape{300, 3, 2}, true}} {
		t.Run("svd", func(t *testing.T) {
			a := mat(c.s, 6, nil)
			want := call(t, "svd", core.Attrs{"full_matrices": c.full}, a)
			got := call(t, "svd", core.Attrs{"full_matrices": c.full}, toGPU(a)[0])
			u, s, vh := back(got[0]), back(got[1]), back(got[2])
			ds := maxDiff(t, s, want[1])
			k := s.Shape()[s.Rank()-1]
			us := core.Call1("slice", core.Attrs{"axis": -1, "stop": k}, u)
			vhs := core.Call1("slice", core.Attrs{"axis": -2, "stop": k}, vh)
			rec := maxDiff(t, mm(core.Call1("mul", nil, us, core.Call1("unsqueeze", core.Attrs{"axis": -2}, s)), vhs), a)
			ou, ov := orthonormality(t, u), orthonormality(t, tr(vh))
			t.Logf("%v full=%v: max |S_gpu - S_cpu| = %.2g, |U S Vh - A| = %.2g, |UᵀU - I| = %.2g, |Vh Vhᵀ - I| = %.2g", c.s, c.full, ds, rec, ou, ov)
			require.Less(t, ds, 1e-4)
			require.Less(t, rec, 1e-4)
			require.Less(t, ou, 1e-5)
			require.Less(t, ov, 1e-5)
			if c.s[0] == 300 { // small matrices: every element against the CPU's, signs included
				for i := range want {
					require.Less(t, maxDiff(t, back(got[i]), want[i]), 1e-4, "output %d", i)
				}
			}
		})
	}
}

// A NaN in one matrix of a batch makes that matrix's eigen- and singular
// values and vectors NaN, as on the CPU, leaves the others alone, and every
// output element is written (the ranks that place them order NaN last).
func TestFactorisationsOfNaN(t *testing.T) {
	needGPU(t)
	a := mat(core.Shape{2, 4, 3}, 7, func(v []float64) { v[len(v)-2] = math.NaN() })
	sq := mat(core.Shape{2, 3, 3}, 8, func(v []float64) { v[len(v)-2] = math.NaN() })
	for _, c := range []struct {
		op string
		x  *core.Tensor
	}{{"svd", a}, {"eigh", sq}} {
		want, got := call(t, c.op, nil, c.x), call(t, c.op, nil, toGPU(c.x)[0])
		for i := range want {
			w, err := want[i].Float64s()
			require.NoError(t, err)
			g, err := back(got[i]).Float64s()
			require.NoError(t, err)
			for j := range w {
				require.Equal(t, math.IsNaN(w[j]), math.IsNaN(g[j]), "%s output %d element %d: got %v, want %v", c.op, i, j, g[j], w[j])
				if !math.IsNaN(w[j]) {
					require.InDelta(t, w[j], g[j], 1e-4, "%s output %d element %d", c.op, i, j)
				}
			}
		}
	}
}

// A matrix past a kernel's size is refused with an error that names the
// limit: the loop limit of a driver like lavapipe, or the workgroup's cap.
func TestFactorisationSizeLimitsAreErrors(t *testing.T) {
	needGPU(t)
	_, err := core.Call("eigh", []*core.Tensor{core.Zeros(core.Shape{300, 300}, core.F32, gpu)}, nil)
	require.ErrorContains(t, err, "takes sides up to 256")
	_, err = core.Call("svd", []*core.Tensor{core.Zeros(core.Shape{80, 80}, core.F32, gpu)}, nil)
	if err != nil {
		require.ErrorContains(t, err, loopLimitMsg)
	}
}
