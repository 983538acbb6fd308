package core_test

import (
	"testing"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// BenchmarkCallAddSmall is the dispatch cost of one op on 8 elements: the
// kernel does almost nothing, so this is the per-op overhead every SDK pays
// (see the Python per-op overhead section of docs/perf.md).
func BenchmarkCallAddSmall(b *testing.B) { benchSmall(b, "add", nil, 2) }

// BenchmarkCallExpSmall is the same for a unary op, and BenchmarkCallSumSmall
// for an op with attributes.
func BenchmarkCallExpSmall(b *testing.B) { benchSmall(b, "exp", nil, 1) }

func BenchmarkCallSumSmall(b *testing.B) { benchSmall(b, "sum", core.Attrs{"axes": []int{0}}, 1) }

func benchSmall(b *testing.B, op string, attrs core.Attrs, inputs int) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, core.Shape{8})
	y := core.FromSlice([]float32{8, 7, 6, 5, 4, 3, 2, 1}, core.Shape{8})
	ins := []*core.Tensor{x, y}[:inputs]
	b.ReportAllocs()
	for b.Loop() {
		outs, err := core.Call(op, ins, attrs)
		if err != nil {
			b.Fatal(err)
		}
		outs[0].Release()
	}
}
