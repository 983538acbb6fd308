//go:build linux && cgo

package cuda_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// The factorisation kernels (one block per matrix) against the CPU backend
// beyond the reference vectors: matrices with more rows than a block has
// threads, batches of many small matrices (the grid striding over them),
// full SVD factors of tall and wide matrices, in f64 (held to 1e-9) and
// f32. The inputs are well conditioned (solve, slogdet) or positive
// definite (cholesky), so the CPU's result is the answer to that accuracy.

// wellCond is randn/sqrt(n) + 3 I over the last two dims.
func wellCond(rng *rand.Rand, d core.DType, shape ...int) arg {
	a := rnd(rng, d, shape...)
	n := shape[len(shape)-1]
	for i := range a.vals {
		a.vals[i] /= math.Sqrt(float64(n))
		if (i/n)%n == i%n {
			a.vals[i] += 3
		}
	}
	return a
}

// spd is X Xᵀ/n + I over the last two dims.
func spd(rng *rand.Rand, d core.DType, shape ...int) arg {
	x := rnd(rng, core.F64, shape...)
	n := shape[len(shape)-1]
	a := arg{d: d, shape: x.shape, vals: make([]float64, len(x.vals))}
	for b := 0; b < len(x.vals); b += n * n {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for k := 0; k < n; k++ {
					s += x.vals[b+i*n+k] * x.vals[b+j*n+k]
				}
				a.vals[b+i*n+j] = s / float64(n)
				if i == j {
					a.vals[b+i*n+j]++
				}
			}
		}
	}
	return a
}

// withNaN is a with one NaN in its last matrix: that matrix's results are
// NaN, the others' untouched, and every output element is written.
func withNaN(a arg) arg {
	a.vals[len(a.vals)-2] = math.NaN()
	return a
}

func linalgCases(rng *rand.Rand) []diffCase {
	const f64, f32 = 1e-9, 1e-3
	return []diffCase{
		{name: "eigh_nan", op: "eigh", tol: f64, args: []arg{withNaN(rnd(rng, core.F64, 2, 4, 4))}},
		{name: "svd_nan", op: "svd", tol: f64, args: []arg{withNaN(rnd(rng, core.F64, 2, 4, 3))}},
		{name: "solve_rows_past_block", op: "_solve", tol: f64, args: []arg{wellCond(rng, core.F64, 70, 70), rnd(rng, core.F64, 70, 3)}},
		{name: "solve_many_small_f32", op: "_solve", tol: f32, args: []arg{wellCond(rng, core.F32, 300, 3, 3), rnd(rng, core.F32, 300, 3, 2)}},
		{name: "slogdet_rows_past_block", op: "slogdet", tol: f64, args: []arg{wellCond(rng, core.F64, 2, 70, 70)}},
		{name: "slogdet_many_small_f32", op: "slogdet", tol: f32, args: []arg{rnd(rng, core.F32, 200, 4, 4)}},
		{name: "cholesky_rows_past_block", op: "cholesky", tol: f64, args: []arg{spd(rng, core.F64, 2, 70, 70)}},
		{name: "cholesky_upper_f32", op: "cholesky", attrs: core.Attrs{"upper": true}, tol: f32, args: []arg{spd(rng, core.F32, 100, 5, 5)}},
		{name: "qr_tall", op: "qr", tol: f64, args: []arg{rnd(rng, core.F64, 70, 40)}},
		{name: "qr_tall_complete", op: "qr", attrs: core.Attrs{"mode": "complete"}, tol: f64, args: []arg{rnd(rng, core.F64, 70, 40)}},
		{name: "qr_wide", op: "qr", tol: f64, args: []arg{rnd(rng, core.F64, 40, 70)}},
		{name: "qr_many_small_f32", op: "qr", tol: f32, args: []arg{rnd(rng, core.F32, 200, 5, 3)}},
		{name: "eigh", op: "eigh", tol: f64, args: []arg{rnd(rng, core.F64, 30, 30)}},
		{name: "eigh_many_small_f32", op: "eigh", tol: f32, args: []arg{rnd(rng, core.F32, 100, 4, 4)}},
		{name: "svd_tall_full", op: "svd", tol: f64, args: []arg{rnd(rng, core.F64, 70, 20)}},
		{name: "svd_tall_reduced", op: "svd", attrs: core.Attrs{"full_matrices": false}, tol: f64, args: []arg{rnd(rng, core.F64, 70, 20)}},
		{name: "svd_wide_full", op: "svd", tol: f64, args: []arg{rnd(rng, core.F64, 20, 50)}},
		{name: "svd_many_small_f32", op: "svd", tol: f32, args: []arg{rnd(rng, core.F32, 100, 3, 2)}},
	}
}

func TestEmulatedFactorisationsMatchCPU(t *testing.T) {
	emu := needEmulator(t)
	for _, c := range linalgCases(rand.New(rand.NewPCG(24, 2))) {
		t.Run(c.name, func(t *testing.T) { runDiff(t, emu, emuDevice, c) })
	}
}

func TestCUDAFactorisationsMatchCPU(t *testing.T) {
	b := needCUDA(t)
	rng := rand.New(rand.NewPCG(24, 2))
	cs := append(linalgCases(rng),
		diffCase{name: "stress_solve", op: "_solve", tol: 1e-9, args: []arg{wellCond(rng, core.F64, 500, 500), rnd(rng, core.F64, 500, 8)}},
		diffCase{name: "stress_eigh_batch", op: "eigh", tol: 1e-9, args: []arg{rnd(rng, core.F64, 2000, 8, 8)}},
	)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) { runDiff(t, b, gpu, c) })
	}
}
