package ir

import (
	"math"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// FuzzFusedGraphs builds a program from the fuzzer's bytes - elementwise
// ops over broadcast operands, optionally fed by a matmul and ending in an
// optional reduction - and checks that the fused graph computes what the
// same graph computes op by op. The seed corpus runs with `go test`; `go
// test -fuzz FuzzFusedGraphs ./core/ir/` explores further (WebGPU needed).
func FuzzFusedGraphs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{9, 200, 13, 77, 31, 8, 250, 1, 0, 44, 3})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{255, 0, 128, 64, 32, 16})
	f.Add([]byte{3, 23, 0}) // a batched product's epilogue reading a scalar (it panicked)
	f.Fuzz(func(t *testing.T, prog []byte) {
		dev := webgpuOrSkip(t)
		if len(prog) < 2 || len(prog) > 64 {
			return
		}
		unary := []string{"exp", "tanh", "sin", "neg", "square", "relu", "sigmoid", "abs", "erf", "gelu", "silu"}
		binary := []string{"add", "sub", "mul", "maximum", "minimum"}
		w := randnOn(dev, 7, 8, 6)
		consts := []*core.Tensor{randnOn(dev, 8, 6), randnOn(dev, 9, 4, 1), randnOn(dev, 10, 1, 6), core.Scalar(0.25, core.F32, dev)}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			y := in[0]
			switch prog[0] % 4 {
			case 1, 2:
				y = c1("matmul", nil, c1("tanh", nil, in[1]), w)
			case 3: // a batch of two products, folded into rows when fused
				y = c1("matmul", nil, c1("stack", core.Attrs{"axis": 0}, c1("tanh", nil, in[1]), in[1]), w)
			}
			pool := []*core.Tensor{y}
			for _, b := range prog[1 : len(prog)-1] {
				a := pool[int(b)%len(pool)]
				switch {
				case b%3 == 0:
					pool = append(pool, c1(unary[int(b/3)%len(unary)], nil, a))
				case b%11 == 1:
					// relu's gradient: a where over a comparison.
					other := consts[int(b/3)%len(consts)]
					pool = append(pool, c1("where", nil, c1("gt", nil, a, other), other, c1("neg", nil, a)))
				case b%13 == 2:
					// gelu's gradient, over two operands of one shape.
					other := consts[int(b/3)%len(consts)]
					pool = append(pool, c1("_gelu_backward", nil, c1("add", nil, a, other), c1("sub", nil, a, other)))
				default:
					other := consts[int(b/3)%len(consts)]
					if b%5 == 0 {
						other = pool[int(b/7)%len(pool)]
					}
					pool = append(pool, c1(binary[int(b/3)%len(binary)], nil, a, other))
				}
			}
			out := pool[len(pool)-1]
			switch prog[len(prog)-1] % 4 {
			case 1:
				out = c1("sum", core.Attrs{"axes": []int{-1}}, out)
			case 2:
				out = c1("mean", nil, out)
			}
			return []*core.Tensor{out}, nil
		}
		x, h := randnOn(dev, 1, 4, 6), randnOn(dev, 2, 4, 8)
		g, err := Trace(program, x, h)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := g.Run(x, h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Fuse(dev); err != nil {
			t.Fatal(err)
		}
		fused, err := g.Run(x, h)
		if err != nil {
			t.Fatalf("%v\n%s", err, g)
		}
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		if len(a) != len(b) {
			t.Fatalf("%d values fused, %d op by op\n%s", len(b), len(a), g)
		}
		for i := range a {
			if math.IsNaN(a[i]) != math.IsNaN(b[i]) || (!math.IsNaN(a[i]) && !math.IsInf(a[i], 0) &&
				math.Abs(a[i]-b[i]) > 1e-4+1e-4*math.Abs(a[i])) {
				t.Fatalf("element %d: %v fused, %v op by op\n%s", i, b[i], a[i], g)
			}
		}
	})
}
