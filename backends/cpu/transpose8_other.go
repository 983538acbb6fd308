//go:build !amd64

package cpu

// transpose8Asm is false: no vector transposition here.
var transpose8Asm = false

// transpose8Vec has no vector kernel here: the callers pack every column.
func transpose8Vec(dst []float32, dstStride int, src []float32, ld, k int) int { return 0 }

// transpose4Vec likewise: gemmPackA's Go loop packs every column.
func transpose4Vec(dst []float32, dstStride int, src []float32, ld, k int) int { return 0 }
