package core

import "github.com/webtensor/webtensor/core/numerics"

// Whole buffers in a dtype's little-endian bytes, through core/numerics'
// element codec (GetF64, PutF64, ...), for SDK glue and file formats.

// EncodeF64 converts values to a dtype's bytes.
func EncodeF64(d DType, vals []float64) []byte {
	b := make([]byte, len(vals)*d.Size())
	for i, v := range vals {
		numerics.PutF64(d, b, i, v)
	}
	return b
}

// DecodeF64 converts a dtype's bytes to float64 values.
func DecodeF64(d DType, b []byte) []float64 {
	n := len(b) / d.Size()
	out := make([]float64, n)
	for i := range out {
		out[i] = numerics.GetF64(d, b, i)
	}
	return out
}
