// Package lower is the per-op lowering the GPU backends share: each
// elementwise op is described once, as an expression in a small dialect,
// and every GPU target compiles that same description. The dialect is
// WGSL's expression syntax: operands x0, x1, ...; infix arithmetic,
// comparison, logical and bitwise operators; select(f, t, cond);
// bitcast<T>(v); conversions T(v) for T in f32, f64, i32, i64, u32; the
// prelude helpers (m_exp, f_pow, is_nan, ...) both targets define; and the
// scalar slots pf(k), pi(k), pu(k) that Scalars fills.
//
// backends/webgpu uses the expressions as WGSL directly; backends/cuda
// translates them to CUDA C++ (float literals and a few builtin names) and
// compiles them with NVRTC. Compute types are "f32", "i32" and "u32" on
// WebGPU, which holds every dtype in 32-bit words; CUDA adds "f64" and
// "i64" for the dtypes it holds natively.
//
// An op's GPU kernel written once as the function of one output element
// (core.ElementBody) uses the same expressions inside a few statements
// (let, var, assignments, if, for, return): ParseBody reads them and
// refuses everything else, WebGPU compiles the body as it is and CUDA
// translates it statement by statement. A row body (an ElementBody with
// Rows, rows.go) is the work of one row shared by a group of lanes: the
// same statements less return, plus store and the row collectives
// (ParseRowBody).
//
// The package also holds what an elementwise launch needs to know about
// its operands whatever the target: the broadcast strides and the
// coalesced iteration space (Iteration).
package lower
