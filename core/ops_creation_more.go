package core

import (
	"fmt"
	"math"
)

// Ranges and identity matrices.

// arangeLength is the number of elements of arange(start, stop, step), with
// PyTorch's rule ceil((stop-start)/step).
func arangeLength(start, stop, step float64) (int, error) {
	if math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(stop) || math.IsInf(stop, 0) {
		return 0, fmt.Errorf("start %v and stop %v must be finite", start, stop)
	}
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		return 0, fmt.Errorf("step must be finite and non-zero, got %v", step)
	}
	if (stop-start)*step < 0 {
		return 0, fmt.Errorf("step %v goes away from stop: start %v, stop %v", step, start, stop)
	}
	n := math.Ceil((stop - start) / step)
	if n > maxArange {
		return 0, fmt.Errorf("arange(%v, %v, %v) has too many elements (%v)", start, stop, step, n)
	}
	return int(n), nil
}

const maxArange = math.MaxInt32 * 64

// ArangeInts returns arange's start and step as integers, and true, when
// start, stop and step are all integers: given as ints (kept exactly, see
// AttrSpec.KeepInt) or as floats holding integers of at most 2^53. Such a
// range is computed in int64, exactly; any other in float64.
func ArangeInts(a Attrs) (start, step int64, ok bool) {
	s, ok1 := exactInt(a, "start")
	_, ok2 := exactInt(a, "stop")
	d, ok3 := exactInt(a, "step")
	return s, d, ok1 && ok2 && ok3
}

func exactInt(a Attrs, name string) (int64, bool) {
	if i, ok := a.IntValue(name); ok {
		return int64(i), true
	}
	f := a.Float(name)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// arangeIntLength is arangeLength in exact integer arithmetic: stop-start
// may not fit an int64 (arange(-2^63, 2^63-1)), but its magnitude fits a
// uint64.
func arangeIntLength(start, stop, step int64) (int, error) {
	if step == 0 {
		return 0, fmt.Errorf("step must be non-zero")
	}
	if (step > 0 && stop < start) || (step < 0 && stop > start) {
		return 0, fmt.Errorf("step %d goes away from stop: start %d, stop %d", step, start, stop)
	}
	span, mag := uint64(stop)-uint64(start), uint64(step)
	if step < 0 {
		span, mag = uint64(start)-uint64(stop), -uint64(step)
	}
	n := span / mag
	if span%mag != 0 {
		n++
	}
	if n > maxArange {
		return 0, fmt.Errorf("arange(%d, %d, %d) has too many elements (%d)", start, stop, step, n)
	}
	return int(n), nil
}

// ArangeAt is element i of an integer arange: computed in wrapping
// arithmetic, which is exact because the value lies between start and stop.
func ArangeAt(start, step int64, i int) int64 {
	return int64(uint64(start) + uint64(i)*uint64(step))
}

func inferArange(_ []Meta, a Attrs) ([]Meta, error) {
	// Like torch.arange: integral bounds give i64, anything else f32.
	start, step, ints := ArangeInts(a)
	d := F32
	switch {
	case a.Has("dtype"):
		d = a.DType("dtype")
	case ints:
		d = I64
	}
	if d == Bool {
		return nil, fmt.Errorf("dtype bool is not supported, want a numeric dtype")
	}
	if !ints {
		n, err := arangeLength(a.Float("start"), a.Float("stop"), a.Float("step"))
		return []Meta{{Shape: Shape{n}, DType: d}}, err
	}
	stop, _ := exactInt(a, "stop")
	n, err := arangeIntLength(start, stop, step)
	if err != nil {
		return nil, err
	}
	if n > 0 && !d.IsFloat() {
		lo, hi := IntRange(d)
		first, last := start, ArangeAt(start, step, n-1)
		if min(first, last) < lo || max(first, last) > hi {
			return nil, fmt.Errorf("values from %d to %d do not fit %s (%d..%d)", first, last, d, lo, hi)
		}
	}
	return []Meta{{Shape: Shape{n}, DType: d}}, nil
}

func inferLinspace(_ []Meta, a Attrs) ([]Meta, error) {
	steps := a.Int("steps")
	if steps < 0 {
		return nil, fmt.Errorf("steps must be non-negative, got %d", steps)
	}
	start, stop := a.Float("start"), a.Float("stop")
	if math.IsNaN(start) || math.IsNaN(stop) {
		return nil, fmt.Errorf("start %v and stop %v must not be NaN", start, stop)
	}
	d := a.DType("dtype")
	if d == Bool {
		return nil, fmt.Errorf("dtype bool is not supported, want a numeric dtype")
	}
	s := Shape{steps}
	return []Meta{{Shape: s, DType: d}}, s.Validate()
}

// eyeCols is the column count of eye: m when given, else n.
func eyeCols(a Attrs) int {
	if a.Has("m") {
		return a.Int("m")
	}
	return a.Int("n")
}

func inferEye(_ []Meta, a Attrs) ([]Meta, error) {
	n, m := a.Int("n"), eyeCols(a)
	if n < 0 || m < 0 {
		return nil, fmt.Errorf("n and m must be non-negative, got n=%d m=%d", n, m)
	}
	s := Shape{n, m}
	return []Meta{{Shape: s, DType: a.DType("dtype")}}, s.Validate()
}

func init() {
	MustRegister(
		&OpDef{
			Name: "arange", Category: "creation", Doc: "Values start, start+step, ... below stop (1-D); integral bounds give i64 unless dtype says otherwise.",
			Attrs: []AttrSpec{
				{Name: "start", Kind: AttrFloat, Default: 0.0, KeepInt: true, Doc: "first value"},
				{Name: "stop", Kind: AttrFloat, Required: true, KeepInt: true, Doc: "end of the range (exclusive)"},
				{Name: "step", Kind: AttrFloat, Default: 1.0, KeepInt: true, Doc: "spacing; may be negative"},
				{Name: "dtype", Kind: AttrDType, Doc: "element type; absent: i64 for integral start/stop/step, else f32"},
				{Name: "device", Kind: AttrString, Default: "", Doc: "device; empty means the default device"},
			},
			Infer: inferArange,
			Samples: []Sample{
				{Name: "ints", Attrs: Attrs{"stop": 6}},
				{Name: "float_step", Attrs: Attrs{"start": 0.5, "stop": 3, "step": 0.3}},
				{Name: "negative_step", Attrs: Attrs{"start": 5, "stop": -4, "step": -2}},
				{Name: "f64", Attrs: Attrs{"start": -1, "stop": 1, "step": 0.25, "dtype": F64}},
				{Name: "i32", Attrs: Attrs{"start": 3, "stop": 20, "step": 4, "dtype": I32}},
				{Name: "empty", Attrs: Attrs{"start": 2, "stop": 2}},
				{Name: "single", Attrs: Attrs{"start": 1, "stop": 1.5}},
			},
		},
		&OpDef{
			Name: "linspace", Category: "creation", Doc: "steps evenly spaced values from start to stop inclusive (1-D).",
			Attrs: []AttrSpec{
				{Name: "start", Kind: AttrFloat, Required: true, Doc: "first value"},
				{Name: "stop", Kind: AttrFloat, Required: true, Doc: "last value"},
				{Name: "steps", Kind: AttrInt, Required: true, Doc: "number of values"},
				{Name: "dtype", Kind: AttrDType, Default: F32, Doc: "element type"},
				{Name: "device", Kind: AttrString, Default: "", Doc: "device; empty means the default device"},
			},
			Infer: inferLinspace,
			Samples: []Sample{
				{Name: "f32", Attrs: Attrs{"start": 0, "stop": 1, "steps": 5}},
				{Name: "descending", Attrs: Attrs{"start": 3, "stop": -2.5, "steps": 12}},
				{Name: "f64", Attrs: Attrs{"start": -1, "stop": 7, "steps": 9, "dtype": F64}},
				{Name: "one", Attrs: Attrs{"start": 2, "stop": 9, "steps": 1}},
				{Name: "empty", Attrs: Attrs{"start": 0, "stop": 1, "steps": 0}},
				{Name: "i64", Attrs: Attrs{"start": 0, "stop": 10, "steps": 4, "dtype": I64}},
			},
		},
		&OpDef{
			Name: "eye", Category: "creation", Doc: "n x m matrix with ones on the main diagonal (m defaults to n).",
			Attrs: []AttrSpec{
				{Name: "n", Kind: AttrInt, Required: true, Doc: "rows"},
				{Name: "m", Kind: AttrInt, Doc: "columns; absent means n"},
				{Name: "dtype", Kind: AttrDType, Default: F32, Doc: "element type"},
				{Name: "device", Kind: AttrString, Default: "", Doc: "device; empty means the default device"},
			},
			Infer: inferEye,
			Samples: []Sample{
				{Name: "square", Attrs: Attrs{"n": 4}},
				{Name: "wide", Attrs: Attrs{"n": 2, "m": 5}},
				{Name: "tall", Attrs: Attrs{"n": 5, "m": 3, "dtype": F64}},
				{Name: "i32", Attrs: Attrs{"n": 3, "dtype": I32}},
				{Name: "empty", Attrs: Attrs{"n": 0, "m": 3}},
			},
		},
	)
}
