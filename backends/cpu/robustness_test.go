package cpu_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// Bad input must come back as an error that names the problem, never as a
// panic. core turns a kernel panic into an "internal error", so these tests
// call every op with hostile shapes, dtypes and attributes and fail on that
// phrase: it means a kernel or a shape rule trusted its input.

var hostileShapes = []core.Shape{{}, {0}, {1}, {3}, {2, 0}, {1, 1, 1}, {2, 3}, {4, 1, 2}, {2, 3, 4, 5}}

var hostileAttrs = []core.Attrs{
	nil,
	{"axis": 7}, {"axis": -9}, {"axes": []int{5}}, {"axes": []int{0, 0}}, {"dim0": 9},
	{"shape": []int{-3, 2}}, {"shape": []int{}}, {"k": -1}, {"k": 100}, {"num_classes": 0},
	{"p": 1.5}, {"p": -1}, {"kernel_size": []int{0}}, {"stride": []int{0, 0}}, {"padding": []int{-1}},
	{"groups": 0}, {"num_segments": -1}, {"n": 0}, {"steps": -2}, {"normalized_shape": []int{9}},
	{"num_groups": 5}, {"pads": []int{9, 9}}, {"mode": "reflect", "pads": []int{5, 5}},
	{"equation": "ij,jk->q"}, {"equation": "->"}, {"chunks": 0}, {"sections": 0}, {"repeats": -1},
	{"reps": []int{-1}}, {"scale": []float64{0}}, {"zero_point": []int{}}, {"size": []int{0, 0}},
	{"scale_factor": []float64{-1}}, {"output_size": []int{0}}, {"dims": []int{0, 0}},
}

func callHostile(t *testing.T, def *core.OpDef, shapes []core.Shape, dtype core.DType, attrs core.Attrs) {
	t.Helper()
	n := len(def.Inputs)
	if n > 0 && def.Inputs[n-1].Variadic {
		n++
	}
	ins := make([]*core.Tensor, n)
	for i := range ins {
		spec := def.Inputs[min(i, len(def.Inputs)-1)]
		d := dtype
		if len(spec.DTypes) > 0 && i > 0 {
			d = spec.DTypes[0]
		}
		s := shapes[i%len(shapes)]
		vals := make([]float64, s.Numel())
		for j := range vals {
			vals[j] = float64(j%3) - 1
		}
		ins[i] = core.FromFloat64s(d, s, vals)
	}
	_, err := core.CallDef(def, ins, attrs)
	if err != nil && strings.Contains(err.Error(), "internal error") {
		shapeList := make([]string, len(ins))
		for i, in := range ins {
			shapeList[i] = in.Shape().String()
		}
		t.Errorf("%s(%s, %s, attrs %v) panicked: %v", def.Name, strings.Join(shapeList, ", "), dtype, attrs, err)
	}
}

func TestOpsRejectHostileInputWithoutPanicking(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile-input sweep is long; run without -short")
	}
	dtypes := []core.DType{core.F32, core.I64, core.Bool, core.F16}
	for _, def := range core.Ops() {
		for si, s := range hostileShapes {
			for di, d := range dtypes {
				for ai, a := range hostileAttrs {
					// A sparse sweep: every shape, dtype and attribute set
					// appears, without the full cross product.
					if (si+di+ai)%3 != 0 {
						continue
					}
					callHostile(t, def, []core.Shape{s, hostileShapes[(si+ai)%len(hostileShapes)]}, d, a)
				}
			}
		}
	}
}

// FuzzOps drives every op with fuzzer-chosen shapes and attributes.
func FuzzOps(f *testing.F) {
	f.Add(uint16(0), []byte{2, 3}, []byte{3}, `{"axis": 1}`)
	f.Add(uint16(40), []byte{0}, []byte{1, 1}, `{"shape": [-1]}`)
	f.Add(uint16(99), []byte{4, 4, 4}, []byte{4}, `{"k": 2}`)
	ops := core.Ops()
	f.Fuzz(func(t *testing.T, op uint16, s0, s1 []byte, attrJSON string) {
		var attrs core.Attrs
		if json.Unmarshal([]byte(attrJSON), &attrs) != nil {
			attrs = nil
		}
		shape := func(b []byte) core.Shape {
			s := core.Shape{}
			for i := 0; i < len(b) && i < 4; i++ {
				s = append(s, int(b[i]%6))
			}
			return s
		}
		callHostile(t, ops[int(op)%len(ops)], []core.Shape{shape(s0), shape(s1)}, core.F32, attrs)
	})
}

func TestHugeAllocationIsAnError(t *testing.T) {
	z := core.Zeros(core.Shape{1 << 20, 1 << 15}, core.F32)
	if z.Err() == nil || !strings.Contains(z.Err().Error(), "cannot allocate") {
		t.Fatalf("want an allocation error, got %v", z.Err())
	}
}

// An empty view at a nonzero offset (the stack gradient of empty inputs)
// goes through the dense fast paths without slicing past its storage.
func TestEmptyViewAtAnOffset(t *testing.T) {
	a := core.Zeros(core.Shape{0, 2}, core.F32)
	a.SetRequiresGrad(true)
	s := core.Call1("stack", core.Attrs{"axis": 1}, a, a)
	loss := core.Call1("sum", nil, s.Mul(core.Zeros(core.Shape{0, 2, 2}, core.F32)))
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	if g := a.Grad(); g == nil || g.Err() != nil || g.Numel() != 0 {
		t.Fatalf("gradient of an empty input: %v", g)
	}
}
