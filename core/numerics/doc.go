// Package numerics holds the element-level arithmetic that core and every
// backend must compute bit for bit alike: the counter-based Philox4x32-10
// generator behind random ops (and SampleSeed, the key of an op sample's
// inputs), the f16/bf16 conversions and the element codec between a dtype's
// bytes and float64 or int64 (GetF64, PutF64, GetI64, PutI64, FloatToInt,
// IntRange).
//
// It imports only core/types (for DType), so core uses it internally and
// backends and plugins import it directly; model code has no need of it.
package numerics
