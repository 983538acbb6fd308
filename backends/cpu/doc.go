// Package cpu is the pure-Go reference backend: no cgo, it builds for
// js/wasm, and it is the oracle every other backend is tested against.
//
// Most kernels read their inputs into float64 (or int64 for integer math) in
// logical order, compute, and write the output dtype, so every dtype and every
// strided layout shares one code path and rounds once. The ops that dominate
// training time have their own paths: matmul, convolution, softmax and
// normalisation in float32, the reductions through one deterministic plan
// that reads every layout in place (reduce_plan.go: float64 block sums
// combined with compensation, the same bits on any number of threads and
// for a view as for its copy), and the elementwise ops (arithmetic,
// comparisons, where, casts, activations, transcendentals) in float32 for
// f32, f16 and bf16 and in their own type for i32 and i64, reading every
// layout in place (ew_plan.go).
//
// The hot loops are assembly on amd64, since Go has no vector intrinsics:
// the float32 GEMM's micro-kernel (gemm_amd64.s, AVX2 and FMA), the
// elementwise kernels (ew_amd64.s) and the reduction and row kernels
// (reduce_amd64.s), AVX2 or AVX-512, generated from one source by _asm
// with avo, picked at start by CPU features; attention over heads of 8 or
// 16 runs in sixteen-query AVX-512 tiles (attention_small_amd64.s), and the
// 3x3 stride-1 convolutions with 16 channels or more as Winograd's
// F(2x2, 3x3) (conv_winograd.go: 2.25x fewer multiply-adds, its transforms
// in conv_winograd_amd64.s). Every
// kernel leaves the vector state as Go's scalar float code needs it: no
// legacy SSE instruction inside, and registers 16-31 zeroed before
// returning (_asm/highregs.go says why and what it cost). It is still no
// cgo; Go loops remain the fallback everywhere else (js/wasm, arm64) and
// the reference the kernels are tested against. Fused multiply-adds round
// once per step, so float32 products may differ in the last bits between
// machines with and without them, and the vector exp, log, tanh, erf, sin,
// ... are polynomials a few ulps from the float64 results the Go loops
// round, far inside the registry's tolerances.
//
// The graph IR's fusions run here too (core/ir/fusion): elementwise trees
// over broadcast operands in one pass (fused_map.go), an optimiser's step
// in one assembly loop (fused_steps.go), and a matmul's epilogue - a
// linear layer's bias and activation, a residual - over each block of the
// product as its last k panel is stored (gemm_epilogue.go).
//
// Kernels run in parallel on one worker pool (pool.go), NumThreads wide:
// GOMAXPROCS unless SetNumThreads or WEBTENSOR_NUM_THREADS says otherwise.
//
// Importing the package registers the "cpu" backend with core.
package cpu
