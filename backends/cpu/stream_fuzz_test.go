package cpu

import (
	"math"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// fuzzBytes hands out the fuzzer's bytes one decision at a time (zeros
// once they run out).
type fuzzBytes []byte

func (b *fuzzBytes) next(n int) int {
	if len(*b) == 0 {
		return 0
	}
	v := int((*b)[0])
	*b = (*b)[1:]
	return v % n
}

// extremeSizes are the sizes a broadcast dim takes: small ones, and ones
// whose views hold far more elements than memory.
var extremeSizes = []int{2, 3, 1 << 16, 1 << 30, 100_000_000_000, 1 << 36}

// FuzzBroadcastReduce runs the streamed reductions over broadcast views of
// extreme sizes, sliced with steps and transposed. Every call must end
// with a result or an error that is not an internal one (a panic), in time
// proportional to the distinct elements (the fuzzer's hang limit catches a
// walk over a huge view). A view small enough to copy must reduce as its
// contiguous copy does; a huge one reduced over everything must agree with
// its base: the same max, min, any and all, and a sum scaled by the repeats.
func FuzzBroadcastReduce(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 4, 0, 0, 0, 0}) // expand(ones(1), [1e11]).sum()
	f.Add([]byte{1, 2, 3, 0, 2, 1, 3, 5, 1, 0, 9, 1, 2})
	f.Add([]byte{2, 3, 1, 2, 1, 0, 1, 2, 3, 1, 1, 4, 7, 2, 0})
	f.Add([]byte{3, 2, 2, 1, 3, 5, 1, 1, 6, 0, 2, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		d := []core.DType{core.F32, core.F64, core.I64, core.I32}[b.next(4)]
		rank := b.next(4)
		base, view := make(core.Shape, rank), make([]int, rank)
		for i := range base {
			base[i] = 1 + b.next(3)
			view[i] = base[i]
			if base[i] == 1 && b.next(2) == 1 {
				view[i] = extremeSizes[b.next(len(extremeSizes))]
			}
		}
		if b.next(3) == 0 { // a new leading dim
			view = append([]int{extremeSizes[b.next(len(extremeSizes))]}, view...)
		}
		vals := make([]float64, base.Numel())
		for i := range vals {
			vals[i] = float64(b.next(9)) - 4
			if d.IsFloat() && b.next(16) == 0 {
				vals[i] = []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1)}[b.next(3)]
			}
		}
		x := core.Call1("expand", core.Attrs{"shape": view}, core.FromFloat64s(d, base, vals))
		if len(view) > 0 && b.next(2) == 1 {
			x = core.Call1("slice", core.Attrs{"axis": b.next(len(view)), "start": b.next(3), "step": 1 + b.next(3)}, x)
		}
		if len(view) > 1 && b.next(2) == 1 {
			x = core.Call1("transpose", core.Attrs{"dim0": 0, "dim1": len(view) - 1}, x)
		}
		if x.Err() != nil {
			return // a view the shape rules refuse
		}
		c := reductionCases[b.next(len(reductionCases))]
		attrs := c.attrs.Clone()
		if attrs == nil {
			attrs = core.Attrs{}
		}
		var axes []int
		for a := range x.Rank() {
			if b.next(2) == 1 {
				axes = append(axes, a)
			}
		}
		switch {
		case c.op == "argmax" || c.op == "argmin":
			if len(axes) > 0 {
				attrs["axis"] = axes[0]
			}
		case c.op != "nonzero" && len(axes) > 0:
			attrs["axes"] = axes
		}
		// Outputs and temporaries past 16 MB are refused, so the fuzzer
		// exercises the refusals without filling the machine.
		withLimit(16<<20, func() { checkReduction(t, c.op, c.sumLike, x, attrs) })
	})
}

func checkReduction(t *testing.T, op string, sumLike bool, x *core.Tensor, attrs core.Attrs) {
	got, err := core.Call(op, []*core.Tensor{x}, attrs)
	if err != nil {
		if strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%s%v of a %v view (strides %v, %s) panicked: %v", op, attrs, x.Shape(), x.Strides(), x.DType(), err)
		}
		return
	}
	name := op + " of " + x.Shape().String()
	if x.Numel() <= 4096 {
		want, err := core.Call(op, []*core.Tensor{x.Contiguous()}, attrs)
		if err != nil {
			t.Fatalf("%s: the view reduced, its copy failed: %v", name, err)
		}
		requireSameValues(t, want[0], got[0], sumLike, name)
		return
	}
	if attrs.Has("axes") || attrs.Has("axis") || x.Numel() == 0 {
		return
	}
	// Over everything: the view holds the base's values, each repeated.
	baseVals, err := core.Call1("contiguous", nil, distinct(x)).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	out, err := got[0].Float64s()
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	switch op {
	case "max", "min":
		want = baseVals[0]
		for _, v := range baseVals {
			if v != v || (want == want && (op == "max") == (v > want) && v != want) {
				want = v
			}
		}
	case "any", "all":
		want = 0
		if op == "all" {
			want = 1
		}
		for _, v := range baseVals {
			if (v != 0) != (op == "all") {
				want = 1 - want
				break
			}
		}
	case "sum":
		for _, v := range baseVals {
			want += v
		}
		want *= float64(x.Numel() / len(baseVals))
		if x.DType() == core.F32 {
			want = float64(float32(want))
		}
	default:
		return
	}
	if !(out[0] == want || (out[0] != out[0] && want != want) || (op == "sum" && math.Abs(out[0]-want) <= 1e-6*math.Abs(want))) {
		t.Fatalf("%s: got %v, want %v (from the %d distinct elements %v)", name, out[0], want, len(baseVals), baseVals)
	}
}

// distinct is x with every broadcast dim (stride 0) cut to one element:
// the elements x repeats, each once.
func distinct(x *core.Tensor) *core.Tensor {
	shape, strides := x.Shape(), x.Strides()
	for i, s := range strides {
		if s == 0 {
			shape[i] = min(shape[i], 1)
		}
	}
	return core.NewView(x, shape, strides, x.Offset())
}
