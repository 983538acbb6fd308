// Package numerics holds the element-level arithmetic that core and every
// backend must compute bit for bit alike: the counter-based Philox4x32-10
// generator behind random ops and the f16/bf16 conversions.
//
// It imports nothing of webtensor, so core uses it internally and backends
// and plugins import it directly; model code has no need of it.
package numerics
