package core_test

import (
	"fmt"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The README's first example: typed methods generated from the registry,
// autograd, and one error check at the end of the chain.
func Example() {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	w := core.FromSlice([]float32{1, -1, 0.5, 2, 0, 1}, core.Shape{3, 2}).SetRequiresGrad(true)
	y := x.Matmul(w).ReLU().Sum()
	if err := y.Backward(); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := y.Item()
	g, _ := w.Grad().Float32s()
	fmt.Println(v, g)
	// Output: 26.5 [5 5 7 7 9 9]
}

// Errors name the op, the problem and the values.
func Example_errors() {
	a := core.Zeros(core.Shape{2, 3}, core.F32)
	b := core.Zeros(core.Shape{4, 5}, core.F32)
	fmt.Println(a.Matmul(b).Sum().Err())
	// Output: matmul: inner dims differ: [2 3] x [4 5] (3 != 4)
}
