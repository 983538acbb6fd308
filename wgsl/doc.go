// Package wgsl holds the WGSL compute kernels of the WebGPU backend, grouped
// by op family, one file per family, embedded at build time.
//
// Kernels are Go text/templates: the backend fills in element types, the
// per-op expression and the workgroup size, and caches one pipeline per
// filled-in source. Shapes, strides, offsets and scalar attributes never
// appear in the source: they travel in the uniform block declared by
// common.wgsl, so one pipeline serves every shape.
//
// Five templates serve ops of every category: common.wgsl (the helpers and
// the uniform block), map.wgsl and map_multi.wgsl (elementwise maps, fused
// chains), body.wgsl (an op's GPU body, core.ElementBody: one thread per
// output element), rows.wgsl (an op's GPU row body, ElementBody with Rows:
// one workgroup per row) and probe.wgsl (the loop-limit probe).
package wgsl

// The unrolled linalg_matmul_vec*.wgsl kernels (`make generate`).
//go:generate python3 ../scripts/gen_matmul_vec.py
