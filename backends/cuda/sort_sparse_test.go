//go:build linux && cgo

package cuda_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

// The sort, segment and CSR kernels against the CPU backend beyond the
// reference vectors: every dtype, strided and permuted inputs, rows long
// enough for the sorter's merge passes (an odd number of runs, runs cut
// to k), many ties, NaN and signed zeros, unsorted ids grouped through the
// sorter, CSR patterns with duplicates, empty rows and unsorted columns.
// Then the in-kernel checks of ids and CSR structures: the CPU's message
// (its first complaint when several apply) at the next read.

// special draws n floats with many ties, NaNs, infinities and both zeros.
func special(rng *rand.Rand, d core.DType, n int) arg {
	pool := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2.5, -2.5, 1e-3}
	v := make([]float64, n)
	for i := range v {
		v[i] = pool[rng.IntN(len(pool))]
	}
	return arg{d: d, shape: core.Shape{n}, vals: v}
}

// shaped reshapes an argument's values.
func (a arg) shaped(shape ...int) arg { a.shape = core.Shape(shape); return a }

// tied draws values of d from a few levels, so equal values abound.
func tied(rng *rand.Rand, d core.DType, shape ...int) arg {
	lo, hi := -3, 4
	if d == core.Bool {
		lo, hi = 0, 2
	} else if d == core.U8 || d == core.U32 {
		lo = 0
	}
	return ints(rng, d, lo, hi, shape...)
}

func sortCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for i, d := range allDTypes {
		desc := i%2 == 0
		cs = append(cs,
			diffCase{name: "sort_" + d.String(), op: "sort", attrs: core.Attrs{"axis": 1, "descending": desc}, args: []arg{rnd(rng, d, 3, 37, 2).permuted(0, 1, 2).asStrided()}},
			diffCase{name: "sort_ties_" + d.String(), op: "sort", attrs: core.Attrs{"axis": 0, "descending": !desc}, args: []arg{tied(rng, d, 45, 3).permuted(1, 0)}},
			diffCase{name: "argsort_long_" + d.String(), op: "argsort", attrs: core.Attrs{"descending": desc}, args: []arg{tied(rng, d, 2, 4500)}},
			diffCase{name: "unique_" + d.String(), op: "unique", attrs: core.Attrs{"sorted": desc, "return_inverse": true, "return_counts": true},
				args: []arg{tied(rng, d, 9, 7).permuted(1, 0)}},
		)
		if d != core.Bool {
			cs = append(cs, diffCase{name: "topk_" + d.String(), op: "topk", attrs: core.Attrs{"k": 5, "axis": 0, "largest": desc, "sorted": i%3 != 0},
				args: []arg{tied(rng, d, 40, 6).asStrided()}})
		}
	}
	for _, d := range []core.DType{core.F32, core.F16, core.F64} {
		cs = append(cs,
			diffCase{name: "sort_special_" + d.String(), op: "sort", attrs: core.Attrs{"descending": true}, args: []arg{special(rng, d, 120).shaped(4, 30)}},
			diffCase{name: "sort_special_long_" + d.String(), op: "sort", args: []arg{special(rng, d, 5000)}},
			diffCase{name: "topk_special_" + d.String(), op: "topk", attrs: core.Attrs{"k": 9, "sorted": false}, args: []arg{special(rng, d, 60).shaped(2, 30)}},
			diffCase{name: "unique_special_" + d.String(), op: "unique", attrs: core.Attrs{"return_inverse": true, "return_counts": true}, args: []arg{special(rng, d, 300)}},
			diffCase{name: "unique_special_first_" + d.String(), op: "unique", attrs: core.Attrs{"sorted": false, "return_inverse": true, "return_counts": true},
				args: []arg{special(rng, d, 300)}},
		)
	}
	return append(cs,
		// Three runs of 2048 (one merged alone), then two.
		diffCase{name: "sort_long_rows", op: "sort", attrs: core.Attrs{"axis": 0}, args: []arg{tied(rng, core.F32, 5000, 2)}},
		diffCase{name: "sort_long_i64", op: "sort", attrs: core.Attrs{"descending": true}, args: []arg{rnd(rng, core.I64, 9000)}},
		diffCase{name: "topk_long_small_k", op: "topk", attrs: core.Attrs{"k": 7}, args: []arg{tied(rng, core.F32, 3, 5000)}},
		diffCase{name: "topk_long_large_k", op: "topk", attrs: core.Attrs{"k": 3000, "largest": false}, args: []arg{rnd(rng, core.F64, 2, 7000)}},
		diffCase{name: "topk_long_unsorted", op: "topk", attrs: core.Attrs{"k": 2500, "sorted": false}, args: []arg{tied(rng, core.I32, 2, 5000)}},
		diffCase{name: "topk_all_unsorted", op: "topk", attrs: core.Attrs{"k": 40, "sorted": false}, args: []arg{tied(rng, core.BF16, 40)}},
		diffCase{name: "unique_long", op: "unique", attrs: core.Attrs{"return_inverse": true, "return_counts": true}, args: []arg{ints(rng, core.I32, 0, 500, 6000)}},
		diffCase{name: "unique_long_first", op: "unique", attrs: core.Attrs{"sorted": false, "return_inverse": true, "return_counts": true},
			args: []arg{ints(rng, core.I64, -300, 300, 60, 90).permuted(1, 0)}},
		diffCase{name: "unique_values_only", op: "unique", attrs: core.Attrs{"sorted": false}, args: []arg{tied(rng, core.F16, 50)}},
		diffCase{name: "sort_many_short_rows", op: "sort", args: []arg{rnd(rng, core.F32, 700, 3)}},
		diffCase{name: "sort_scalar", op: "sort", args: []arg{{d: core.I8, vals: []float64{-4}}}},
	)
}

// runs is n sorted ids: segment k from starts[k] on (the last segment is
// empty).
func runs(n int, starts ...int) []float64 {
	v := make([]float64, n)
	for i := range v {
		for k, s := range starts {
			if i >= s {
				v[i] = float64(k)
			}
		}
	}
	return v
}

// csr is a random CSR pattern of rows x cols with about per entries per
// row: unsorted columns, duplicates and empty rows.
func csr(rng *rand.Rand, d core.DType, rows, cols, per int) (ptr, idx arg) {
	p := []float64{0}
	var c []float64
	for r := 0; r < rows; r++ {
		n := rng.IntN(2 * per)
		if r%7 == 3 {
			n = 0
		}
		for range n {
			c = append(c, float64(rng.IntN(cols)))
		}
		p = append(p, float64(len(c)))
	}
	return arg{d: d, shape: core.Shape{len(p)}, vals: p}, arg{d: d, shape: core.Shape{len(c)}, vals: c}
}

func sparseCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for i, d := range numeric {
		id := []core.DType{core.I64, core.I32}[i%2]
		sorted := ints(rng, id, 0, 9, 40)
		for j := 1; j < len(sorted.vals); j++ {
			sorted.vals[j] = max(sorted.vals[j], sorted.vals[j-1])
		}
		for _, op := range []string{"segment_sum", "segment_max"} {
			cs = append(cs,
				diffCase{name: op + "_" + d.String(), op: op, attrs: core.Attrs{"num_segments": 11}, tol: sumTol(d),
					args: []arg{rnd(rng, d, 40, 3, 2).permuted(0, 2, 1), ints(rng, id, 0, 11, 40)}},
				diffCase{name: op + "_sorted_" + d.String(), op: op, attrs: core.Attrs{"num_segments": 10, "sorted": true}, tol: sumTol(d),
					args: []arg{rnd(rng, d, 40, 5).asStrided(), sorted}},
			)
		}
	}
	for i, d := range floatTypes {
		id := []core.DType{core.I64, core.I32}[i%2]
		ptr, idx := csr(rng, id, 30, 20, 6)
		entries := int(idx.shape[0])
		cs = append(cs,
			diffCase{name: "segment_mean_" + d.String(), op: "segment_mean", attrs: core.Attrs{"num_segments": 7}, tol: sumTol(d),
				args: []arg{rnd(rng, d, 50, 4), ints(rng, id, 0, 7, 50)}},
			diffCase{name: "segment_max_special_" + d.String(), op: "segment_max", attrs: core.Attrs{"num_segments": 6},
				args: []arg{special(rng, d, 90).shaped(30, 3), ints(rng, id, 0, 6, 30)}},
			diffCase{name: "segment_gather_" + d.String(), op: "_segment_gather", args: []arg{rnd(rng, d, 6, 3, 2).permuted(0, 2, 1), ints(rng, id, 0, 6, 25)}},
			diffCase{name: "spmm_" + d.String(), op: "spmm", tol: sumTol(d), args: []arg{ptr, idx, rnd(rng, d, entries), rnd(rng, d, 5, 20).permuted(1, 0)}},
			diffCase{name: "spmm_transposed_" + d.String(), op: "_spmm_transposed", attrs: core.Attrs{"cols": 20}, tol: sumTol(d),
				args: []arg{ptr, idx, rnd(rng, d, entries).asStrided(), rnd(rng, d, 30, 3)}},
			diffCase{name: "sddmm_" + d.String(), op: "sddmm", tol: sumTol(d), args: []arg{ptr, idx, rnd(rng, d, 30, 4), rnd(rng, d, 20, 4).permuted(1, 0)}},
		)
	}
	// Ties for the max gradient: the maxima computed on the CPU.
	data, ids := ints(rng, core.F32, -2, 2, 60, 3), ints(rng, core.I64, 0, 5, 60)
	m := core.Call1("segment_max", core.Attrs{"num_segments": 5}, data.on(cpuDev), ids.on(cpuDev))
	mv, err := m.Float64s()
	if err != nil {
		panic(err)
	}
	maxes := arg{d: core.F32, shape: core.Shape{5, 3}, vals: mv}
	ptr, idx := csr(rng, core.I64, 400, 300, 8)
	entries := int(idx.shape[0])
	return append(cs,
		diffCase{name: "segment_max_grad_ties", op: "_segment_max_grad", args: []arg{data, ids, maxes, rnd(rng, core.F32, 5, 3).asStrided()}},
		// More rows than a sort tile: the ids are grouped by merge passes.
		diffCase{name: "segment_sum_long", op: "segment_sum", attrs: core.Attrs{"num_segments": 300}, tol: 1e-12,
			args: []arg{rnd(rng, core.F64, 5000, 2), ints(rng, core.I64, 0, 290, 5000)}},
		diffCase{name: "segment_mean_long_i32", op: "segment_mean", attrs: core.Attrs{"num_segments": 40}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 4500), ints(rng, core.I32, 0, 40, 4500)}},
		// Few long segments: chunks of rows, their partials folded in order.
		diffCase{name: "segment_sum_pool", op: "segment_sum", attrs: core.Attrs{"num_segments": 3}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 3000, 4).permuted(0, 1), ints(rng, core.I64, 0, 3, 3000)}},
		diffCase{name: "segment_mean_pool_sorted", op: "segment_mean", attrs: core.Attrs{"num_segments": 4, "sorted": true}, tol: 1e-12,
			args: []arg{rnd(rng, core.F64, 2000, 3), {d: core.I32, shape: core.Shape{2000}, vals: runs(2000, 0, 500, 1700)}}},
		diffCase{name: "segment_max_pool_special", op: "segment_max", attrs: core.Attrs{"num_segments": 2},
			args: []arg{special(rng, core.F32, 4000).shaped(2000, 2), ints(rng, core.I32, 0, 2, 2000)}},
		diffCase{name: "segment_max_pool_i16", op: "segment_max", attrs: core.Attrs{"num_segments": 3}, args: []arg{rnd(rng, core.I16, 3000), ints(rng, core.I64, 0, 3, 3000)}},
		diffCase{name: "segment_sum_pool_u8", op: "segment_sum", attrs: core.Attrs{"num_segments": 2}, args: []arg{rnd(rng, core.U8, 3000, 2), ints(rng, core.I64, 0, 2, 3000)}},
		diffCase{name: "segment_sum_empty_segments", op: "segment_sum", attrs: core.Attrs{"num_segments": 0}, args: []arg{rnd(rng, core.F32, 0, 3), ints(rng, core.I64, 0, 1, 0)}},
		diffCase{name: "spmm_big", op: "spmm", tol: 1e-5, args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 300, 33)}},
		diffCase{name: "spmm_transposed_big", op: "_spmm_transposed", attrs: core.Attrs{"cols": 300}, tol: 1e-5,
			args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 400, 5)}},
		diffCase{name: "sddmm_big", op: "sddmm", tol: 1e-5, args: []arg{ptr, idx, rnd(rng, core.F32, 400, 16), rnd(rng, core.F32, 300, 16).permuted(1, 0)}},
	)
}

func TestEmulatedSortSparseMatchCPU(t *testing.T) {
	emu := needEmulator(t)
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range append(sortCases(rng), sparseCases(rng)...) {
		t.Run(c.name, func(t *testing.T) { runDiff(t, emu, emuDevice, c) })
	}
}

// TestCUDASortSparseMatchCPU runs the cases on a real GPU, with sizes the
// emulator would take long over.
func TestCUDASortSparseMatchCPU(t *testing.T) {
	b := needCUDA(t)
	rng := rand.New(rand.NewPCG(3, 5))
	cs := append(sortCases(rng), sparseCases(rng)...)
	ptr, idx := csr(rng, core.I64, 20000, 15000, 20)
	entries := int(idx.shape[0])
	cs = append(cs,
		diffCase{name: "stress_sort_rows", op: "sort", args: []arg{rnd(rng, core.F32, 64, 100000)}},
		diffCase{name: "stress_topk", op: "topk", attrs: core.Attrs{"k": 50}, args: []arg{rnd(rng, core.F16, 8, 150000)}},
		diffCase{name: "stress_unique", op: "unique", attrs: core.Attrs{"sorted": false, "return_inverse": true, "return_counts": true},
			args: []arg{ints(rng, core.I64, 0, 100000, 1000000)}},
		diffCase{name: "stress_segment_sum", op: "segment_sum", attrs: core.Attrs{"num_segments": 15000}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 300000, 16), ints(rng, core.I64, 0, 15000, 300000)}},
		diffCase{name: "stress_spmm", op: "spmm", tol: 1e-5, args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 15000, 64)}},
		diffCase{name: "stress_spmm_transposed", op: "_spmm_transposed", attrs: core.Attrs{"cols": 15000}, tol: 1e-5,
			args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 20000, 64)}},
	)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) { runDiff(t, b, gpu, c) })
	}
}

// checkCases are inputs the CPU refuses: bad ids and CSR structures, some
// with several problems (the CPU names the first).
func checkCases() []diffCase {
	v := func(d core.DType, vals ...float64) arg { return arg{d: d, shape: core.Shape{len(vals)}, vals: vals} }
	data := arg{d: core.F32, shape: core.Shape{4, 2}, vals: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	dense := arg{d: core.F32, shape: core.Shape{3, 2}, vals: []float64{1, 2, 3, 4, 5, 6}}
	four := v(core.F32, 1, 2, 3, 4)
	seg := func(op string, sorted bool, ids arg) diffCase {
		return diffCase{op: op, attrs: core.Attrs{"num_segments": 3, "sorted": sorted}, args: []arg{data, ids}}
	}
	return []diffCase{
		seg("segment_sum", false, v(core.I64, 0, 3, 1, 2)),
		seg("segment_max", false, v(core.I32, 0, 1, -1, 5)),
		seg("segment_mean", true, v(core.I64, 0, 2, 1, 1)),
		seg("segment_sum", true, v(core.I64, 0, 2, 1, 7)),
		seg("segment_sum", true, v(core.I64, 0, 1, 9, 1)),
		{op: "_segment_gather", args: []arg{data, v(core.I64, 1, 4)}},
		{op: "_segment_max_grad", args: []arg{data, v(core.I64, 0, 1, 3, 2), dense, dense}},
		{op: "spmm", args: []arg{v(core.I64, 1, 2, 4), v(core.I64, 0, 1, 2, 0), four, dense}},
		{op: "spmm", args: []arg{v(core.I64, 0, 2, 3), v(core.I32, 0, 1, 2, 0), four, dense}},
		{op: "spmm", args: []arg{v(core.I64, 0, 3, 2, 4), v(core.I64, 0, 1, 2, 0), four, dense}},
		{op: "spmm", args: []arg{v(core.I32, 0, 2, 4), v(core.I64, 0, 3, 2, -1), four, dense}},
		{op: "spmm", args: []arg{v(core.I64, 0, 3, 2, 4), v(core.I64, 0, 9, 2, 0), four, dense}},
		{op: "_spmm_transposed", attrs: core.Attrs{"cols": 3}, args: []arg{v(core.I64, 0, 3, 4), v(core.I64, 0, 1, 5, 0), four, arg{d: core.F32, shape: core.Shape{2, 2}, vals: []float64{1, 2, 3, 4}}}},
		{op: "_spmm_transposed", attrs: core.Attrs{"cols": 3}, args: []arg{v(core.I64, 0, 5, 4), v(core.I64, 0, 1, 2, 0), four, arg{d: core.F32, shape: core.Shape{2, 2}, vals: []float64{1, 2, 3, 4}}}},
		{op: "sddmm", args: []arg{v(core.I64, 0, 2, 4), v(core.I64, 0, 2, 3, 1), arg{d: core.F32, shape: core.Shape{2, 2}, vals: []float64{1, 2, 3, 4}}, dense.shaped(2, 3)}},
		{op: "sddmm", args: []arg{v(core.I64, 5), v(core.I64), arg{d: core.F32, shape: core.Shape{0, 2}}, dense.shaped(2, 3)}},
	}
}

func TestEmulatedSparseChecks(t *testing.T) {
	needEmulator(t)
	runSparseChecks(t, emuDevice)
}

func TestCUDASparseChecks(t *testing.T) {
	needCUDA(t)
	runSparseChecks(t, gpu)
}

func runSparseChecks(t *testing.T, dev core.Device) {
	for _, c := range checkCases() {
		t.Run(c.op, func(t *testing.T) {
			want := callErr(c, cpuDev)
			require.Error(t, want, "the CPU accepts this case")
			_, msg, ok := strings.Cut(want.Error(), c.op+": ")
			require.True(t, ok, "the CPU's error names the op: %v", want)
			got := callErr(c, dev)
			if assert.Error(t, got) {
				assert.Contains(t, got.Error(), msg)
				assert.Contains(t, got.Error(), c.op)
			}
			x := arg{d: core.F64, shape: core.Shape{3}, vals: []float64{0, 1, 2}}
			v, err := core.Call1("flip", nil, x.on(dev)).Float64s()
			require.NoError(t, err)
			assert.Equal(t, []float64{2, 1, 0}, v)
		})
	}
}

// BenchmarkCUDALaneOps times the sort, sparse and Fourier kernels on a
// real GPU at sizes models use (each op's inputs made once; the time per
// call includes waiting for the device).
func BenchmarkCUDALaneOps(bm *testing.B) {
	be, err := core.BackendFor(gpu)
	if err != nil {
		bm.Skipf("no CUDA device: %v", err)
	}
	b := be.(*cuda.Backend)
	rng := rand.New(rand.NewPCG(1, 1))
	ptr, idx := csr(rng, core.I64, 100000, 100000, 10)
	entries := int(idx.shape[0])
	for _, c := range []diffCase{
		{name: "sort_64x100k_f32", op: "sort", args: []arg{rnd(rng, core.F32, 64, 100000)}},
		{name: "sort_4096x512_f32", op: "sort", args: []arg{rnd(rng, core.F32, 4096, 512)}},
		{name: "topk50_32x128k_f32", op: "topk", attrs: core.Attrs{"k": 50}, args: []arg{rnd(rng, core.F32, 32, 128000)}},
		{name: "segment_sum_pool_32_of_100kx64", op: "segment_sum", attrs: core.Attrs{"num_segments": 32, "sorted": true},
			args: []arg{rnd(rng, core.F32, 100000, 64), {d: core.I64, shape: core.Shape{100000}, vals: runs(100000, seq32(100000)...)}}},
		{name: "segment_sum_unsorted_1Mx16", op: "segment_sum", attrs: core.Attrs{"num_segments": 50000}, args: []arg{rnd(rng, core.F32, 1000000, 16), ints(rng, core.I64, 0, 50000, 1000000)}},
		{name: "spmm_100k_1M_x64", op: "spmm", args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 100000, 64)}},
		{name: "spmm_transposed_100k_1M_x64", op: "_spmm_transposed", attrs: core.Attrs{"cols": 100000}, args: []arg{ptr, idx, rnd(rng, core.F32, entries), rnd(rng, core.F32, 100000, 64)}},
		{name: "fft_4096x512_f32", op: "fft", args: []arg{rnd(rng, core.F32, 4096, 512, 2)}},
		{name: "fft_1M_f32", op: "fft", args: []arg{rnd(rng, core.F32, 1<<20, 2)}},
		{name: "rfft_256x1000_f32", op: "rfft", args: []arg{rnd(rng, core.F32, 256, 1000)}},
	} {
		bm.Run(c.name, func(bm *testing.B) {
			ins := make([]*core.Tensor, len(c.args))
			for i, a := range c.args {
				ins[i] = a.on(gpu)
			}
			run := func() {
				outs, err := core.Call(c.op, ins, c.attrs)
				if err == nil {
					err = b.Sync()
				}
				if err != nil {
					bm.Fatal(err)
				}
				for _, o := range outs {
					o.Release()
				}
			}
			run()
			bm.ResetTimer()
			for range bm.N {
				run()
			}
		})
	}
}

// seq32 is 32 even segment starts over n rows.
func seq32(n int) []int {
	s := make([]int, 32)
	for i := range s {
		s[i] = i * n / 32
	}
	return s
}
