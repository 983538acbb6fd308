package webgpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Ops whose thread walks a whole row, channel, line or segment, past the
// loop limit of a software driver (see looplimit_ops_test.go): 70,000
// members, or 80,000 for a batch norm channel of 2 x 40,000, 60,000 read
// three times for a group norm.

func TestScansPastLoopLimit(t *testing.T) {
	needGPU(t)
	scale := func(x *core.Tensor, by float64) *core.Tensor {
		return core.Call1("mul", nil, x, core.FromFloat64s(core.F32, core.Shape{1}, []float64{by}, x.Device()))
	}
	right := map[string]func(d core.Device) []*core.Tensor{
		"cumsum along rows": func(d core.Device) []*core.Tensor {
			return outputs("cumsum", core.Attrs{"axis": 1}, positive(core.Shape{3, 70000}, 1, d))
		},
		"cumsum along columns in f16": func(d core.Device) []*core.Tensor {
			x := core.Call1("cast", core.Attrs{"dtype": "f16"}, scale(positive(core.Shape{70000, 3}, 1, d), 1e-3))
			return outputs("cumsum", core.Attrs{"axis": 0}, x)
		},
		"cumprod": func(d core.Device) []*core.Tensor {
			x := core.Call1("add", nil, scale(positive(core.Shape{2, 70000}, 1, d), 1e-5), core.FromFloat64s(core.F32, core.Shape{1}, []float64{0.99998}, d))
			return outputs("cumprod", core.Attrs{"axis": 1}, x)
		},
	}
	for name, f := range right {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-3, false) })
	}
	// Integers sum into i64 exactly, in two words.
	exact := map[string]func(d core.Device) []*core.Tensor{
		"cumsum of i32 into i64": func(d core.Device) []*core.Tensor {
			x := core.Call1("sub", nil, scale(positive(core.Shape{2, 70000}, 1, d), 1e4), scale(positive(core.Shape{2, 70000}, 2, d), 1e4))
			return outputs("cumsum", core.Attrs{"axis": 1}, core.Call1("cast", core.Attrs{"dtype": "i32"}, x))
		},
		"cumsum of bools": func(d core.Device) []*core.Tensor {
			return outputs("cumsum", core.Attrs{"axis": 0}, core.Call1("gt", nil, positive(core.Shape{70000, 2}, 1, d), positive(core.Shape{1}, 2, d)))
		},
	}
	for name, f := range exact {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 0, false) })
	}
	// A running sum that leaves the i32 the GPU holds i64 in fails there.
	t.Run("cumsum past i32", func(t *testing.T) {
		x := core.Call1("cast", core.Attrs{"dtype": "i32"}, scale(positive(core.Shape{70000}, 1, gpu), 1e5))
		require.ErrorContains(t, core.Call1("cumsum", core.Attrs{"axis": 0}, x).Err(), "32-bit integers")
	})
	refusable := map[string]func(d core.Device) []*core.Tensor{
		// Two walks over 40,000.
		"cumprod's gradient": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("cumprod", core.Attrs{"axis": 1}, ts[0])
			}, positive(core.Shape{2, 40000}, 1, d))
		},
	}
	for name, f := range refusable {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-3, true) })
	}
}

func TestNormsPastLoopLimit(t *testing.T) {
	needGPU(t)
	batchNorm := func(training bool, running bool) func(d core.Device) []*core.Tensor {
		return func(d core.Device) []*core.Tensor {
			var rm, rv *core.Tensor
			if running {
				rm, rv = positive(core.Shape{3}, 4, d), positive(core.Shape{3}, 5, d)
			}
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				outs, err := core.Call("batch_norm", []*core.Tensor{ts[0], rm, rv, ts[1], ts[2]}, core.Attrs{"training": training, "momentum": 0.3})
				if err != nil {
					return core.ErrTensor(err)
				}
				if !training || !running {
					return outs[0]
				}
				// The returned statistics take part in the loss too.
				stat := func(s *core.Tensor) *core.Tensor { return core.Call1("reshape", core.Attrs{"shape": []int{3, 1}}, s) }
				return core.Call1("add", nil, core.Call1("add", nil, outs[0], stat(outs[1])), stat(outs[2]))
			}, positive(core.Shape{2, 3, 40000}, 1, d), positive(core.Shape{3}, 2, d), positive(core.Shape{3}, 3, d))
		}
	}
	norm := func(op string, attrs core.Attrs, shapes ...core.Shape) func(d core.Device) []*core.Tensor {
		return func(d core.Device) []*core.Tensor {
			leaves := make([]*core.Tensor, len(shapes))
			for i, s := range shapes {
				leaves[i] = positive(s, uint64(i+1), d)
			}
			return withGrads(func(ts ...*core.Tensor) *core.Tensor { return core.Call1(op, attrs, ts...) }, leaves...)
		}
	}
	cases := map[string]func(d core.Device) []*core.Tensor{
		"batch_norm in training":                 batchNorm(true, false),
		"batch_norm in training with statistics": batchNorm(true, true),
		"batch_norm in evaluation":               batchNorm(false, true),
		"group_norm": norm("group_norm", core.Attrs{"num_groups": 2},
			core.Shape{2, 4, 150, 200}, core.Shape{4}, core.Shape{4}),
		"group_norm with silu": norm("group_norm", core.Attrs{"num_groups": 2, "activation": "silu"},
			core.Shape{2, 4, 150, 200}, core.Shape{4}, core.Shape{4}),
		"layer_norm": norm("layer_norm", core.Attrs{"normalized_shape": []int{70000}},
			core.Shape{3, 70000}, core.Shape{70000}, core.Shape{70000}),
		"rms_norm":    norm("rms_norm", core.Attrs{"normalized_shape": []int{70000}}, core.Shape{3, 70000}, core.Shape{70000}),
		"normalize":   norm("normalize", core.Attrs{"axis": 0, "p": 3.0}, core.Shape{70000, 3}),
		"softmax":     norm("softmax", core.Attrs{"axis": 0}, core.Shape{70000, 3}),
		"log_softmax": norm("log_softmax", core.Attrs{"axis": 1}, core.Shape{3, 70000}),
		// Ties share the gradient: each member counted its group's.
		"max's gradient with ties": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("max", core.Attrs{"axes": []int{1}}, core.Call1("floor", nil, ts[0]))
			}, positive(core.Shape{2, 70000}, 1, d))
		},
		"max-norm's gradient with ties": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("norm", core.Attrs{"ord": math.Inf(1), "axes": []int{0}}, core.Call1("round", nil, ts[0]))
			}, positive(core.Shape{70000, 2}, 1, d))
		},
		// A thread of its own member that loops over no others.
		"2-norm's gradient": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("norm", core.Attrs{"axes": []int{0}}, ts[0])
			}, positive(core.Shape{70000, 2}, 1, d))
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-3, false) })
	}
	// A row body's lanes walk rows of 2.2M in 34,375 steps each, in both
	// its loops: past lavapipe's limit, refused by name (rowTrips), never
	// stopped short.
	t.Run("rms_norm over rows longer than the lanes can loop", func(t *testing.T) {
		pastLimit(t, func(d core.Device) []*core.Tensor {
			return outputs("rms_norm", core.Attrs{"normalized_shape": []int{2200000}}, positive(core.Shape{1, 2200000}, 1, d))
		}, 1e-3, true)
	})
}

func TestSparsePastLoopLimit(t *testing.T) {
	backend := needGPU(t)
	const n = 70000
	// Segment 0 holds all but six rows, segment 2 the six; 1 and 3 are
	// empty.
	ids := make([]float64, n+5)
	for i := 4; i < 50; i += 9 {
		ids[i] = 2
	}
	segmentIDs := func(d core.Device) *core.Tensor { return core.FromFloat64s(core.I64, core.Shape{n + 5}, ids, d) }
	cases := map[string]func(d core.Device) []*core.Tensor{
		"segment_max's gradient": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("segment_max", core.Attrs{"num_segments": 4}, core.Call1("round", nil, ts[0]), segmentIDs(d))
			}, positive(core.Shape{n + 5, 3}, 1, d))
		},
	}
	for _, op := range []string{"segment_sum", "segment_mean", "segment_max"} {
		cases[op] = func(d core.Device) []*core.Tensor {
			return outputs(op, core.Attrs{"num_segments": 4}, positive(core.Shape{n + 5, 3}, 1, d), segmentIDs(d))
		}
	}
	// CSR rows 0 and 2 have a few entries, row 1 (a hub) n; the dense
	// matrix is n wide or four wide (the vec4 kernel).
	ptr := []float64{0, 3, 3 + n, 5 + n}
	idx := []float64{1, 5, 7}
	for i := range n {
		idx = append(idx, float64(i))
	}
	idx = append(idx, 2, 3)
	csr := func(d core.Device) (*core.Tensor, *core.Tensor, *core.Tensor) {
		return core.FromFloat64s(core.I64, core.Shape{4}, ptr, d), core.FromFloat64s(core.I64, core.Shape{len(idx)}, idx, d),
			positive(core.Shape{len(idx)}, 2, d)
	}
	for name, width := range map[string]int{"spmm": 3, "spmm four wide": 8} {
		cases[name] = func(d core.Device) []*core.Tensor {
			p, i, v := csr(d)
			return outputs("spmm", nil, p, i, v, positive(core.Shape{n, width}, 3, d))
		}
	}
	// Every row's one entry in column 0: a hub column for the product
	// with the transpose.
	cases["spmm with the transpose"] = func(d core.Device) []*core.Tensor {
		p, i := make([]float64, n+1), make([]float64, n)
		for r := range n {
			p[r+1] = float64(r + 1)
		}
		return outputs("_spmm_transposed", core.Attrs{"cols": 3}, core.FromFloat64s(core.I64, core.Shape{n + 1}, p, d),
			core.FromFloat64s(core.I64, core.Shape{n}, i, d), positive(core.Shape{n}, 2, d), positive(core.Shape{n, 3}, 3, d))
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-4, false) })
	}
	t.Run("spmm with a fused epilogue", func(t *testing.T) {
		p, i, v := csr(core.CPU)
		dense, extra := positive(core.Shape{n, 8}, 3, core.CPU), positive(core.Shape{8}, 4, core.CPU)
		e := &fusion.Expr{Op: "mul", Args: []*fusion.Expr{{Arg: 0}, {Arg: 1}}}
		got, err := backend.FuseEpilogue("spmm", []*core.Tensor{p.To(gpu), i.To(gpu), v.To(gpu), dense.To(gpu)}, nil, e, []*core.Tensor{extra.To(gpu)})
		require.NoError(t, err)
		closeTo(t, got.To(core.CPU), core.Call1("mul", nil, core.Call1("spmm", nil, p, i, v, dense), extra), 1e-4)
	})
	// An entry's dot product walks the inner dim.
	t.Run("sddmm", func(t *testing.T) {
		pastLimit(t, func(d core.Device) []*core.Tensor {
			p, i := core.FromFloat64s(core.I64, core.Shape{2}, []float64{0, 2}, d), core.FromFloat64s(core.I64, core.Shape{2}, []float64{0, 1}, d)
			return outputs("sddmm", nil, p, i, positive(core.Shape{1, n}, 1, d), positive(core.Shape{n, 2}, 2, d))
		}, 1e-4, true)
	})
}
