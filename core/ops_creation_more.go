package core

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Ranges and identity matrices.

func inferArange(_ []Meta, a Attrs) ([]Meta, error) {
	// Like torch.arange: integral bounds give i64, anything else f32.
	start, step, ints := oprules.ArangeInts(a)
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
	n, err := oprules.ArangeLen(a)
	if !ints {
		return []Meta{{Shape: Shape{n}, DType: d}}, err
	}
	if err != nil {
		return nil, err
	}
	if n > 0 && !d.IsFloat() {
		lo, hi := numerics.IntRange(d)
		first, last := start, oprules.ArangeAt(start, step, n-1)
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
			GPUBody: &ElementBody{Body: func(t BodyTypes, _ Attrs, _ BodySlots) string {
				return "\treturn select(" + t.Out + "(0), " + t.Out + "(1), i / odim(1u) == i % odim(1u));"
			}},
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
