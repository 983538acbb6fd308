package geom

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// The transforms against PyG's (NormalizeScale; RandomRotate over a
// one-value range, so no draw has to match), their defining properties, and
// reproducibility from the seed.

func runTransformReference(t *testing.T, dev core.Device, dt core.DType, atol, rtol float64) {
	for _, c := range refCasesOfKind(t, dt, dev, "transform") {
		t.Run(c.name, func(t *testing.T) {
			pos := c.get("pos")
			var got *core.Tensor
			if c.name == "normalize_scale" {
				got = NormalizeScale(pos)
			} else {
				deg := c.attrs["degrees"].(float64)
				r := RandomRotate{Degrees: [2]float64{deg, deg}, Axis: int(c.attrs["axis"].(float64))}
				got = r.Apply(pos, 12345)
			}
			require.Equal(t, dev, got.Device())
			closeTo(t, c.name, got, c.get("out"), atol, rtol)
		})
	}
}

func TestTransformsMatchPyGOnCPU(t *testing.T) {
	runTransformReference(t, core.CPU, core.F64, 1e-12, 1e-12)
}

func TestTransformsMatchPyGOnWebGPU(t *testing.T) {
	dev := webgputest.Device
	webgputest.Need(t)
	runTransformReference(t, dev, core.F32, 1e-5, 1e-5)
}

func offCentreCloud(t *testing.T, n int, seed uint64, dt core.DType, dev core.Device) *core.Tensor {
	t.Helper()
	x := core.Call1("randn", core.Attrs{"shape": []int{n, 3}, "dtype": dt, "device": dev.String(), "seed": int(seed), "offset": 0})
	// Off-centre and stretched, so centring and scaling have work to do.
	x = core.Call1("add", nil, core.Call1("mul", nil, x, core.FromFloat64s(dt, core.Shape{3}, []float64{3, 0.5, 7}, dev)),
		core.FromFloat64s(dt, core.Shape{3}, []float64{100, -20, 4}, dev))
	require.NoError(t, x.Err())
	return x
}

func values(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// columnMeans and maxima of [N, 3] values: the largest |coordinate| and the
// largest Euclidean norm.
func cloudStats(v []float64) (mean [3]float64, maxAbs, maxNorm float64) {
	n := len(v) / 3
	for i := range n {
		s := 0.0
		for k := range 3 {
			e := v[3*i+k]
			mean[k] += e / float64(n)
			maxAbs = math.Max(maxAbs, math.Abs(e))
			s += e * e
		}
		maxNorm = math.Max(maxNorm, math.Sqrt(s))
	}
	return mean, maxAbs, maxNorm
}

func forDevices(t *testing.T, run func(t *testing.T, dev core.Device, dt core.DType, tol float64)) {
	t.Run("cpu", func(t *testing.T) { run(t, core.CPU, core.F64, 1e-12) })
	t.Run("webgpu", func(t *testing.T) {
		webgputest.Need(t)
		run(t, webgputest.Device, core.F32, 2e-6)
	})
}

func TestNormalizeProperties(t *testing.T) {
	forDevices(t, func(t *testing.T, dev core.Device, dt core.DType, tol float64) {
		x := offCentreCloud(t, 500, 3, dt, dev)
		mean, maxAbs, _ := cloudStats(values(t, NormalizeScale(x)))
		require.InDeltaSlice(t, []float64{0, 0, 0}, mean[:], tol, "NormalizeScale: zero mean")
		require.InDelta(t, 0.999999, maxAbs, tol, "NormalizeScale: largest |coordinate|")
		mean, _, maxNorm := cloudStats(values(t, NormalizeUnitSphere(x)))
		require.InDeltaSlice(t, []float64{0, 0, 0}, mean[:], tol, "NormalizeUnitSphere: zero mean")
		require.InDelta(t, 1, maxNorm, tol, "NormalizeUnitSphere: largest norm")
		same := core.FromFloat64s(dt, core.Shape{4, 3}, []float64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, dev)
		require.Equal(t, make([]float64, 12), values(t, NormalizeScale(same)), "one repeated point")
	})
}

func TestRandomRotate(t *testing.T) {
	forDevices(t, func(t *testing.T, dev core.Device, dt core.DType, tol float64) {
		x := offCentreCloud(t, 50, 5, dt, dev)
		xv := values(t, x)
		for axis := range 3 {
			r := RandomRotate{Degrees: [2]float64{-180, 180}, Axis: axis}
			a := values(t, r.Apply(x, 7))
			require.Equal(t, a, values(t, r.Apply(x, 7)), "axis %d: same seed, same rotation", axis)
			require.NotEqual(t, a, values(t, r.Apply(x, 8)), "axis %d: another seed, another rotation", axis)
			for i := range 50 {
				p, q := xv[3*i:3*i+3], a[3*i:3*i+3]
				require.InDelta(t, p[axis], q[axis], tol*100, "axis %d: the axis coordinate stays", axis)
				require.InDelta(t, math.Hypot(math.Hypot(p[0], p[1]), p[2]), math.Hypot(math.Hypot(q[0], q[1]), q[2]), tol*1e3, "norm")
			}
			// The angle Apply used: Rotate by it gives the same points.
			require.InDeltaSlice(t, a, values(t, Rotate(x, r.Angle(7), axis)), 0)
		}
	})
	angles := map[float64]bool{}
	for seed := range uint64(200) {
		a := RandomRotate{Degrees: [2]float64{-10, 30}}.Angle(seed)
		require.True(t, a >= -10 && a < 30, "angle %v outside [-10, 30)", a)
		angles[math.Floor(a/10)] = true
	}
	require.Len(t, angles, 4, "angles cover the range")
}

func TestRandomJitter(t *testing.T) {
	forDevices(t, func(t *testing.T, dev core.Device, dt core.DType, tol float64) {
		n := 4000
		x := core.Zeros(core.Shape{n, 3}, dt, dev)
		j := RandomJitter{Translate: []float64{0.1, 0.5, 2}}
		a := values(t, j.Apply(x, 11))
		require.Equal(t, a, values(t, j.Apply(x, 11)), "same seed, same jitter")
		require.NotEqual(t, a, values(t, j.Apply(x, 12)), "another seed, another jitter")
		for k, lim := range j.Translate {
			var sum, sq float64
			for i := range n {
				v := a[3*i+k]
				require.True(t, v >= -lim && v < lim, "offset %v outside [-%v, %v)", v, lim, lim)
				sum, sq = sum+v, sq+v*v
			}
			// Uniform on [-t, t): mean 0, variance t^2/3 (5 sigma bounds).
			require.InDelta(t, 0, sum/float64(n), 5*lim/math.Sqrt(3*float64(n)), "dimension %d mean", k)
			require.InDelta(t, lim*lim/3, sq/float64(n), 5*lim*lim*0.3/math.Sqrt(float64(n)), "dimension %d variance", k)
		}
		g := values(t, RandomJitter{Std: 0.2, Clip: 0.5}.Apply(x, 3))
		var sq float64
		clipped := 0
		for _, v := range g {
			require.True(t, math.Abs(v) <= 0.5, "Gaussian offset %v beyond the clip", v)
			if math.Abs(v) == 0.5 {
				clipped++
			}
			sq += v * v
		}
		require.InDelta(t, 0.2, math.Sqrt(sq/float64(len(g))), 0.01, "Gaussian standard deviation")
		require.Positive(t, clipped, "some offsets beyond 2.5 sigma were clipped")
	})
}

// A seed gives the same uniform jitter on every backend (Philox draws with
// 24 bits, exact in f32).
func TestRandomJitterSameAcrossDevices(t *testing.T) {
	dev := webgputest.Device
	webgputest.Need(t)
	j := RandomJitter{Translate: []float64{0.25}}
	x := core.Zeros(core.Shape{100, 3}, core.F32)
	require.InDeltaSlice(t, values(t, j.Apply(x, 5)), values(t, j.Apply(x.To(dev), 5)), 1e-7)
}

func TestTransformErrors(t *testing.T) {
	x := core.Zeros(core.Shape{4, 3}, core.F32)
	flat := core.Zeros(core.Shape{4}, core.F32)
	four := core.Zeros(core.Shape{4, 4}, core.F32)
	for _, tc := range []struct {
		want string
		got  *core.Tensor
	}{
		{"NormalizeScale: pos has shape [4], want [N, D]", NormalizeScale(flat)},
		{"NormalizeUnitSphere: no points", NormalizeUnitSphere(core.Zeros(core.Shape{0, 3}, core.F32))},
		{"RandomRotate: pos has 4 coordinates per point, want 2 or 3", RandomRotate{}.Apply(four, 1)},
		{"RandomRotate: degrees [10, -10], want finite lo <= hi", RandomRotate{Degrees: [2]float64{10, -10}}.Apply(x, 1)},
		{"RandomRotate: axis 3, want 0, 1 or 2", RandomRotate{Axis: 3}.Apply(x, 1)},
		{"RandomJitter: 2 translate values for 3-D points, want 1 or 3", RandomJitter{Translate: []float64{1, 2}}.Apply(x, 1)},
		{"RandomJitter: 0 translate values", RandomJitter{}.Apply(x, 1)},
		{"RandomJitter: pos has shape [4], want [N, D]", RandomJitter{Std: 1}.Apply(flat, 1)},
	} {
		t.Run(tc.want, func(t *testing.T) {
			require.Error(t, tc.got.Err())
			require.Contains(t, tc.got.Err().Error(), tc.want, fmt.Sprint(tc.got.Err()))
		})
	}
}
