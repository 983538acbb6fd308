// Package main is asmgen, the command that writes backends/cpu's assembly
// with avo: the elementwise
// kernels (-kernels ew: ew_amd64.s and its Go declarations,
// ew_stubs_amd64.go) or the reductions, row kernels and the fused program loop (-kernels
// reduce: reduce_amd64.s, reduce_stubs_amd64.go). Every kernel is written once
// against the isa type and emitted for AVX2 and AVX-512; each file's
// constants end up in one 64-byte-aligned table (aligned.go). The
// polynomial and rational fits of the transcendentals come from fits.py.
// Run it through go generate in backends/cpu.
package main
