package geom

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Point-cloud transforms on positions pos [N, D] (one cloud), as PyG's
// torch_geometric.transforms. They are registry ops, so they run where pos
// lives. The random ones take a seed and draw from core's Philox stream
// (the "rand"/"randn" ops with that seed and offset 0), so a seed gives the
// same result every time, on every backend up to the last bit of a
// transcendental; vary the seed per sample and epoch for augmentation.

// NormalizeScale centres pos on its mean and scales it by 0.999999 over its
// largest absolute coordinate, as PyG's T.NormalizeScale: the points end
// up inside the cube (-1, 1), the largest |coordinate| 0.999999. (Use
// NormalizeUnitSphere to bound the Euclidean norm instead.) A cloud of one
// repeated point becomes zeros, where PyG divides by zero.
func NormalizeScale(pos *core.Tensor) *core.Tensor {
	c, err := centred("NormalizeScale", pos)
	if err != nil {
		return core.ErrTensor(err)
	}
	return scaleBy(c, op("max", nil, op("abs", nil, c)), 0.999999)
}

// NormalizeUnitSphere centres pos on its mean and scales it so the point
// farthest from the centre has norm 1 (PointNet's normalisation).
func NormalizeUnitSphere(pos *core.Tensor) *core.Tensor {
	c, err := centred("NormalizeUnitSphere", pos)
	if err != nil {
		return core.ErrTensor(err)
	}
	norms := op("sqrt", nil, op("sum", core.Attrs{"axes": []int{1}}, op("square", nil, c)))
	return scaleBy(c, op("max", nil, norms), 1)
}

func centred(fn string, pos *core.Tensor) (*core.Tensor, error) {
	if _, _, err := pointsShape(fn, "pos", pos); err != nil {
		return nil, err
	}
	if pos.Shape()[0] == 0 {
		return nil, fmt.Errorf("geom: %s: no points", fn)
	}
	return op("sub", nil, pos, op("mean", core.Attrs{"axes": []int{0}, "keepdim": true}, pos)), nil
}

// scaleBy is c * (target / m), or c where m is 0.
func scaleBy(c, m *core.Tensor, target float64) *core.Tensor {
	dt, dev := c.DType(), c.Device()
	zero := core.Scalar(0, dt, dev)
	factor := op("div", nil, core.Scalar(target, dt, dev), m)
	factor = op("where", nil, op("gt", nil, m, zero), factor, core.Scalar(1, dt, dev))
	return op("mul", nil, c, factor)
}

// RandomRotate rotates pos about a coordinate axis by an angle drawn
// uniformly from Degrees, as PyG's T.RandomRotate (the same matrices, so
// the same angle gives the same result). 2-D points rotate in their plane.
type RandomRotate struct {
	Degrees [2]float64 // the range of the angle, in degrees (PyG's degrees=a is [-a, a])
	Axis    int        // 0, 1 or 2 for 3-D points
}

// Angle is the rotation, in degrees, Apply uses for seed: the first element
// of "rand" with that seed, mapped to the range.
func (r RandomRotate) Angle(seed uint64) float64 {
	u := numerics.PhiloxUniform(seed, 0, 0)
	return r.Degrees[0] + (r.Degrees[1]-r.Degrees[0])*u
}

// Apply rotates pos [N, 2] or [N, 3] by the angle drawn for seed.
func (r RandomRotate) Apply(pos *core.Tensor, seed uint64) *core.Tensor {
	if _, d, err := pointsShape("RandomRotate", "pos", pos); err != nil {
		return core.ErrTensor(err)
	} else if d != 2 && d != 3 {
		return core.ErrTensor(fmt.Errorf("geom: RandomRotate: pos has %d coordinates per point, want 2 or 3", d))
	}
	lo, hi := r.Degrees[0], r.Degrees[1]
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return core.ErrTensor(fmt.Errorf("geom: RandomRotate: degrees [%v, %v], want finite lo <= hi", lo, hi))
	}
	if r.Axis < 0 || r.Axis > 2 {
		return core.ErrTensor(fmt.Errorf("geom: RandomRotate: axis %d, want 0, 1 or 2", r.Axis))
	}
	return Rotate(pos, r.Angle(seed), r.Axis)
}

// Rotate is RandomRotate's rotation by a given angle in degrees: pos times
// the transpose of PyG's matrix (for axis 2, [[cos, sin, 0], [-sin, cos,
// 0], [0, 0, 1]]).
func Rotate(pos *core.Tensor, degrees float64, axis int) *core.Tensor {
	_, d, err := pointsShape("Rotate", "pos", pos)
	if err != nil {
		return core.ErrTensor(err)
	}
	rad := math.Pi * degrees / 180
	s, c := math.Sin(rad), math.Cos(rad)
	var m []float64
	switch {
	case d == 2:
		m = []float64{c, s, -s, c}
	case d == 3 && axis == 0:
		m = []float64{1, 0, 0, 0, c, s, 0, -s, c}
	case d == 3 && axis == 1:
		m = []float64{c, 0, -s, 0, 1, 0, s, 0, c}
	case d == 3 && axis == 2:
		m = []float64{c, s, 0, -s, c, 0, 0, 0, 1}
	default:
		return core.ErrTensor(fmt.Errorf("geom: Rotate: %d-D points about axis %d, want 2-D, or 3-D about axis 0, 1 or 2", d, axis))
	}
	mat := core.FromFloat64s(pos.DType(), core.Shape{d, d}, m, pos.Device())
	return op("matmul", nil, pos, op("transpose", nil, mat))
}

// RandomJitter moves every point by its own random offset: uniform in
// [-t, t) per dimension, as PyG's T.RandomJitter, or Gaussian when Std > 0
// (optionally clipped to [-Clip, Clip], PointNet's jitter).
type RandomJitter struct {
	Translate []float64 // the uniform range per dimension; one value serves every dimension
	Std       float64   // > 0: Gaussian jitter with this standard deviation instead
	Clip      float64   // > 0: clip Gaussian offsets to [-Clip, Clip]
}

// Apply jitters pos [N, D] with the offsets drawn for seed.
func (j RandomJitter) Apply(pos *core.Tensor, seed uint64) *core.Tensor {
	n, d, err := pointsShape("RandomJitter", "pos", pos)
	if err != nil {
		return core.ErrTensor(err)
	}
	dt, dev := pos.DType(), pos.Device()
	draw := core.Attrs{"shape": []int{n, d}, "dtype": dt, "device": dev.String(), "seed": int(seed), "offset": 0}
	if j.Std > 0 {
		off := op("mul", nil, op("randn", draw), core.Scalar(j.Std, dt, dev))
		if j.Clip > 0 {
			off = op("clamp", core.Attrs{"min": -j.Clip, "max": j.Clip}, off)
		}
		return op("add", nil, pos, off)
	}
	if j.Std < 0 || j.Clip < 0 {
		return core.ErrTensor(fmt.Errorf("geom: RandomJitter: std %v, clip %v, want >= 0", j.Std, j.Clip))
	}
	t := make([]float64, d)
	switch len(j.Translate) {
	case 1:
		for k := range t {
			t[k] = math.Abs(j.Translate[0])
		}
	case d:
		for k, v := range j.Translate {
			t[k] = math.Abs(v)
		}
	default:
		return core.ErrTensor(fmt.Errorf("geom: RandomJitter: %d translate values for %d-D points, want 1 or %d (or Std > 0)", len(j.Translate), d, d))
	}
	// u in [0, 1) -> (2u - 1) t in [-t, t).
	u := op("rand", draw)
	u = op("sub", nil, op("mul", nil, u, core.Scalar(2, dt, dev)), core.Scalar(1, dt, dev))
	return op("add", nil, pos, op("mul", nil, u, core.FromFloat64s(dt, core.Shape{d}, t, dev)))
}
