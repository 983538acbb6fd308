package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/core"
)

// An elementwise kernel allocates nothing that grows with its operands:
// the output is the caller's. On one thread (AllocsPerRun sets GOMAXPROCS
// to 1) a dense op allocates nothing at all, or a closure; split over the
// pool it adds the closures handed to it; a layout that needs a walk adds
// a few slices of rank length.
func TestElementwiseKernelsAllocateOnlyBookkeeping(t *testing.T) {
	const n = 1 << 20
	x := core.Full(core.Shape{n}, 1.5, core.F32)
	h := core.Full(core.Shape{n}, 1.5, core.F16)
	row := core.Full(core.Shape{1024}, 2, core.F32)
	cases := []struct {
		op   string
		ins  []*core.Tensor
		out  core.DType
		attr core.Attrs
		max  float64
	}{
		{"add", []*core.Tensor{x, x}, core.F32, nil, 0},
		// A broadcast row walks the layout (stream.go): slices of rank
		// length for its strides and positions.
		{"add", []*core.Tensor{core.NewView(x, core.Shape{1024, 1024}, []int{1024, 1}, 0), row}, core.F32, nil, 24},
		{"mul", []*core.Tensor{h, h}, core.F16, nil, 0},
		{"exp", []*core.Tensor{x}, core.F32, nil, 0},
		{"gelu", []*core.Tensor{h}, core.F16, core.Attrs{"approximate": "none"}, 1},
		{"gt", []*core.Tensor{x, x}, core.Bool, nil, 0},
		{"cast", []*core.Tensor{x}, core.F16, core.Attrs{"dtype": core.F16}, 0},
	}
	for _, c := range cases {
		out := core.Full(c.ins[0].Shape(), 0, c.out)
		if len(c.ins) == 2 && c.ins[1].Numel() == 1024 {
			out = core.Full(core.Shape{1024, 1024}, 0, c.out)
		}
		call := &core.KernelCall{Inputs: c.ins, Outputs: []*core.Tensor{out}, Attrs: c.attr}
		k := core.LookupKernel("cpu", c.op)
		var err error
		allocs := testing.AllocsPerRun(5, func() { err = k(call) })
		assert.NoError(t, err, c.op)
		assert.LessOrEqual(t, allocs, c.max, "%s %v allocations per call", c.op, c.out)
	}
}
