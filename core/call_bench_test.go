package core_test

import (
	"testing"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// BenchmarkCallAddSmall is the dispatch cost of one op on 8 elements: the
// kernel does almost nothing, so this is the per-op overhead every SDK pays
// (see the Python per-op overhead row of docs/perf.md).
func BenchmarkCallAddSmall(b *testing.B) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, core.Shape{8})
	y := core.FromSlice([]float32{8, 7, 6, 5, 4, 3, 2, 1}, core.Shape{8})
	ins := []*core.Tensor{x, y}
	b.ReportAllocs()
	for b.Loop() {
		outs, err := core.Call("add", ins, nil)
		if err != nil {
			b.Fatal(err)
		}
		outs[0].Release()
	}
}
