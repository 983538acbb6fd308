package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Window functions (values fixed by their size, built on the host),
// ReverseSequence and CenterCropPad.

func init() {
	windows := map[string]func(n, N float64) float64{
		"HannWindow":    func(n, N float64) float64 { return 0.5 - 0.5*math.Cos(2*math.Pi*n/N) },
		"HammingWindow": func(n, N float64) float64 { return 25.0/46 - (1-25.0/46)*math.Cos(2*math.Pi*n/N) },
		"BlackmanWindow": func(n, N float64) float64 {
			return 0.42 - 0.5*math.Cos(2*math.Pi*n/N) + 0.08*math.Cos(4*math.Pi*n/N)
		},
	}
	for name, f := range windows {
		def([]string{"output_datatype", "periodic"}, window1d(f), name)
	}
	def([]string{"batch_axis", "time_axis"}, reverseSequence, "ReverseSequence")
	def([]string{"axes"}, centerCropPad, "CenterCropPad")
}

func window1d(f func(n, N float64) float64) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		size, _ := c.scalar(0)
		dt, err := dtypeOf(int32(c.attrInt("output_datatype", 1)))
		if err != nil {
			return nil, err
		}
		n := int(size)
		if n < 0 || n > maxElements {
			c.fail("size %d is out of range", n)
			return nil, nil
		}
		N := float64(n)
		if c.attrInt("periodic", 1) == 0 {
			N--
		}
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = f(float64(i), N)
		}
		return one(core.FromFloat64s(dt, core.Shape{n}, vals, c.m.dev))
	}
}

// reverseSequence reverses the first lens[b] steps of each batch entry: a
// host-built index along the time axis, taken with take_along_axis.
func reverseSequence(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	lens, _ := c.ints(1)
	ba, ta := c.axis(c.attrInt("batch_axis", 1), x.Rank()), c.axis(c.attrInt("time_axis", 0), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	s := x.Shape()
	T, B := s[ta], s[ba]
	if len(lens) != B || ba == ta {
		c.fail("sequence_lens has %d values for batch size %d (batch axis %d, time axis %d)", len(lens), B, ba, ta)
		return nil, nil
	}
	idx := make([]int64, T*B)
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[ta], shape[ba] = T, B
	for t := range T {
		for b := range B {
			src := int64(t)
			if l := lens[b]; int64(t) < l {
				src = l - 1 - int64(t)
			}
			if ta < ba {
				idx[t*B+b] = src
			} else {
				idx[b*T+t] = src
			}
		}
	}
	index := core.FromSlice(idx, core.Shape(shape), x.Device())
	full := append([]int{}, s...)
	return one(call("take_along_axis", core.Attrs{"axis": ta}, x, call("expand", core.Attrs{"shape": full}, index)))
}

func centerCropPad(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	target, _ := c.ints(1)
	axes := make([]int, x.Rank())
	for i := range axes {
		axes[i] = i
	}
	if list, ok := c.attrInts("axes"); ok {
		axes = c.axes(list, x.Rank())
	}
	if len(target) != len(axes) {
		c.fail("shape %v gives %d sizes for %d axes", target, len(target), len(axes))
		return nil, nil
	}
	y := x
	for i, a := range axes {
		dim, want := y.Shape()[a], int(target[i])
		switch {
		case want < dim:
			start := (dim - want) / 2
			y = call("slice", core.Attrs{"axis": a, "start": start, "stop": start + want}, y)
		case want > dim:
			pads := make([]int, 0, 2*(y.Rank()-a))
			for b := y.Rank() - 1; b > a; b-- {
				pads = append(pads, 0, 0)
			}
			begin := (want - dim) / 2
			y = call("pad", core.Attrs{"pads": append(pads, begin, want-dim-begin)}, y)
		}
	}
	return one(y)
}
