//go:build linux && cgo

package cuda_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// The Fourier, quantisation and einsum kernels against the CPU backend
// beyond the reference vectors: lines transformed whole in shared memory
// (several per block), lines long enough for the global passes (powers of
// two and Bluestein, f32 and f64), every norm and length change, strided
// and permuted inputs; per-channel quantisation over strided inputs and
// special values; einsum with half precision, integers, diagonals, more
// labels than the reduction's layout takes and products whose operands
// need a copy.

// fftTol is the tolerance of an f32 transform of length n against the
// CPU's f64 one (rounded to f32), relative to the magnitudes.
func fftTol(d core.DType, n int) float64 {
	if d == core.F64 {
		return 1e-10
	}
	return 2e-6 * math.Log2(float64(n)+2) * math.Sqrt(float64(n))
}

func fftCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for _, d := range []core.DType{core.F32, core.F64} {
		for _, n := range []int{1, 2, 7, 8, 12, 100, 256, 600, 1024, 2048, 3000, 4096} {
			norm := []string{"backward", "ortho", "forward"}[n%3]
			tol := fftTol(d, 2*n)
			cs = append(cs,
				diffCase{name: "fft_" + d.String() + "_" + strconv.Itoa(n), op: "fft", attrs: core.Attrs{"norm": norm}, tol: tol, args: []arg{rnd(rng, d, 2, n, 2)}},
				diffCase{name: "ifft_pad_" + d.String() + "_" + strconv.Itoa(n), op: "ifft", attrs: core.Attrs{"n": n + 3, "axis": 1}, tol: fftTol(d, 2*n+6),
					args: []arg{rnd(rng, d, n, 2, 2).permuted(1, 0, 2)}},
				diffCase{name: "rfft_" + d.String() + "_" + strconv.Itoa(n), op: "rfft", attrs: core.Attrs{"norm": norm}, tol: tol, args: []arg{rnd(rng, d, 2, n).asStrided()}},
				diffCase{name: "irfft_" + d.String() + "_" + strconv.Itoa(n), op: "irfft", attrs: core.Attrs{"n": n, "norm": norm}, tol: tol, args: []arg{rnd(rng, d, 3, n/2+1, 2)}},
			)
		}
	}
	return append(cs,
		diffCase{name: "fft_many_short_lines", op: "fft", tol: 1e-4, args: []arg{rnd(rng, core.F32, 300, 8, 2).permuted(1, 0, 2)}},
		diffCase{name: "fft_many_bluestein_lines", op: "fft", attrs: core.Attrs{"axis": 1}, tol: 1e-4, args: []arg{rnd(rng, core.F32, 40, 5, 3, 2)}},
		diffCase{name: "fft_trim", op: "fft", attrs: core.Attrs{"n": 5}, tol: 1e-4, args: []arg{rnd(rng, core.F32, 3, 17, 2)}},
		diffCase{name: "rfft_trim_long", op: "rfft", attrs: core.Attrs{"n": 2500}, tol: fftTol(core.F32, 5000), args: []arg{rnd(rng, core.F32, 4000)}},
		diffCase{name: "irfft_pad_bins", op: "irfft", attrs: core.Attrs{"n": 3001, "norm": "ortho"}, tol: fftTol(core.F32, 6000), args: []arg{rnd(rng, core.F32, 700, 2)}},
		diffCase{name: "irfft_trim_bins_f64", op: "irfft", attrs: core.Attrs{"n": 10, "axis": 0}, tol: 1e-10, args: []arg{rnd(rng, core.F64, 9, 3, 2)}},
		diffCase{name: "resize_pad_f16", op: "_resize_axis", attrs: core.Attrs{"axis": 1, "n": 9}, args: []arg{rnd(rng, core.F16, 3, 4, 2).permuted(0, 2, 1)}},
		diffCase{name: "resize_trim_bf16", op: "_resize_axis", attrs: core.Attrs{"axis": 0, "n": 2}, args: []arg{rnd(rng, core.BF16, 5, 3).asStrided()}},
	)
}

func quantCases(rng *rand.Rand) []diffCase {
	spec := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.25, 0.75, -0.25, -0.75, 1e30, -1e30, 127.5, -128.5, 255.5}
	var cs []diffCase
	for _, d := range floatTypes {
		for _, q := range []core.DType{core.I8, core.U8} {
			cs = append(cs,
				diffCase{name: "quantize_channel_" + d.String() + "_" + q.String(), op: "quantize",
					attrs: core.Attrs{"scale": []float64{0.05, 0.5, 0.01}, "zero_point": map[core.DType][]int{core.I8: {3, -7, 0}, core.U8: {3, 200, 0}}[q], "axis": 1, "dtype": q},
					args:  []arg{rnd(rng, d, 4, 3, 5).permuted(2, 1, 0).asStrided()}},
				diffCase{name: "quantize_special_" + d.String() + "_" + q.String(), op: "quantize",
					attrs: core.Attrs{"scale": []float64{0.5}, "zero_point": []int{map[core.DType]int{core.I8: -3, core.U8: 100}[q]}, "dtype": q},
					args:  []arg{{d: d, shape: core.Shape{len(spec)}, vals: spec}}},
			)
		}
	}
	return append(cs,
		diffCase{name: "dequantize_channel_i8", op: "dequantize", attrs: core.Attrs{"scale": []float64{0.1, 0.02}, "zero_point": []int{-128, 127}, "axis": 0},
			args: []arg{ints(rng, core.I8, -128, 128, 2, 50).asStrided()}},
		diffCase{name: "dequantize_u8_last", op: "dequantize", attrs: core.Attrs{"scale": []float64{0.3, 3, 1e-3}, "zero_point": []int{0, 255, 128}, "axis": -1},
			args: []arg{ints(rng, core.U8, 0, 256, 30, 3).permuted(0, 1)}},
	)
}

func einsumCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for _, d := range numeric {
		tol := map[core.DType]float64{core.F32: 1e-5, core.F64: 1e-12, core.F16: 2e-3, core.BF16: 1.6e-2}[d]
		cs = append(cs,
			diffCase{name: "einsum_bmm_" + d.String(), op: "einsum", attrs: core.Attrs{"equation": "bij,bjk->bik"}, tol: tol,
				args: []arg{tied(rng, d, 2, 3, 4).permuted(0, 2, 1), tied(rng, d, 2, 3, 5)}},
			diffCase{name: "einsum_diag_" + d.String(), op: "einsum", attrs: core.Attrs{"equation": "iij,jk->ki"}, tol: tol,
				args: []arg{tied(rng, d, 3, 3, 4).asStrided(), tied(rng, d, 4, 2)}},
		)
	}
	return append(cs,
		// Five kept dims that do not merge: the sum goes through a copy.
		diffCase{name: "einsum_many_labels", op: "einsum", attrs: core.Attrs{"equation": "abcdefgh->abcde"}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 2, 3, 2, 3, 2, 3, 2, 3).permuted(7, 6, 5, 4, 3, 2, 1, 0)}},
		// x and b are not one stride apart in the first operand: a copy.
		diffCase{name: "einsum_copied_operand", op: "einsum", attrs: core.Attrs{"equation": "xab,bxc->ac"}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 3, 4, 5), rnd(rng, core.F32, 5, 3, 2)}},
		diffCase{name: "einsum_many_free", op: "einsum", attrs: core.Attrs{"equation": "abcdx,xefgh->hgfedcba"}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 2, 3, 2, 2, 5), rnd(rng, core.F32, 5, 2, 3, 2, 2)}},
		diffCase{name: "einsum_batch_broadcast", op: "einsum", attrs: core.Attrs{"equation": "...ij,...jk->...ki"}, tol: 1e-5,
			args: []arg{rnd(rng, core.F32, 3, 1, 2, 4), rnd(rng, core.F32, 5, 3, 4).permuted(0, 2, 1)}},
		diffCase{name: "einsum_chain4_f64", op: "einsum", attrs: core.Attrs{"equation": "ab,bc,cd,de->ae"}, tol: 1e-12,
			args: []arg{rnd(rng, core.F64, 3, 4), rnd(rng, core.F64, 4, 5).asStrided(), rnd(rng, core.F64, 5, 2), rnd(rng, core.F64, 2, 3)}},
		diffCase{name: "einsum_scatter_diag", op: "_einsum_scatter", attrs: core.Attrs{"equation": "ij->jiji", "shape": []int{3, 2, 3, 2}},
			args: []arg{rnd(rng, core.I16, 2, 3).asStrided()}},
	)
}

func TestEmulatedFFTQuantEinsumMatchCPU(t *testing.T) {
	emu := needEmulator(t)
	rng := rand.New(rand.NewPCG(9, 13))
	for _, c := range append(append(fftCases(rng), quantCases(rng)...), einsumCases(rng)...) {
		t.Run(c.name, func(t *testing.T) { runDiff(t, emu, emuDevice, c) })
	}
}

// TestCUDAFFTQuantEinsumMatchCPU runs the cases on a real GPU, with a few
// sizes the emulator would take long over.
func TestCUDAFFTQuantEinsumMatchCPU(t *testing.T) {
	b := needCUDA(t)
	rng := rand.New(rand.NewPCG(9, 13))
	cs := append(append(fftCases(rng), quantCases(rng)...), einsumCases(rng)...)
	cs = append(cs,
		diffCase{name: "stress_fft_lines", op: "fft", tol: fftTol(core.F32, 1024), args: []arg{rnd(rng, core.F32, 4096, 512, 2)}},
		diffCase{name: "stress_fft_long", op: "fft", tol: fftTol(core.F32, 1<<20), args: []arg{rnd(rng, core.F32, 1<<20, 2)}},
		diffCase{name: "stress_rfft_bluestein", op: "rfft", tol: fftTol(core.F64, 100003), args: []arg{rnd(rng, core.F64, 4, 100003)}},
	)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) { runDiff(t, b, gpu, c) })
	}
}

// TestLaneKernelsCompile compiles the kernels of the sort, sparse,
// Fourier, quantisation and einsum cases with NVRTC for sm_90 (the
// compile-only device reads back zeros: values are not checked, and
// unique sees no groups).
func TestLaneKernelsCompile(t *testing.T) {
	needNVRTC(t)
	rng := rand.New(rand.NewPCG(3, 5))
	cs := append(sortCases(rng), sparseCases(rng)...)
	cs = append(append(append(cs, fftCases(rng)...), quantCases(rng)...), einsumCases(rng)...)
	compileCases(t, cs)
}
