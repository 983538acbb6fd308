package cpu

import "github.com/webtensor/webtensor/core"

// Kernels of tril and triu, the reference of their GPU bodies: a byte copy
// of each kept element and zero bytes elsewhere, so every dtype (i64 past
// 2^53 included) is exact.

func init() {
	register("tril", triangleKernel(func(col, row, diagonal int) bool { return col-row <= diagonal }))
	register("triu", triangleKernel(func(col, row, diagonal int) bool { return col-row >= diagonal }))
}

func triangleKernel(keep func(col, row, diagonal int) bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		n := out.Numel()
		if n == 0 {
			return nil
		}
		s := in.Shape()
		rows, cols := s[len(s)-2], s[len(s)-1]
		size := in.DType().Size()
		src := rowMajorBytes(in)
		dst := host(out)[out.Offset()*size : (out.Offset()+n)*size]
		diagonal := k.Attrs.Int("diagonal")
		parallelFor(n/cols, cols, func(lo, hi int) {
			for m := lo; m < hi; m++ { // m is a row of some matrix of the batch
				row := m % rows
				for col := range cols {
					at := (m*cols + col) * size
					if keep(col, row, diagonal) {
						copy(dst[at:at+size], src[at:at+size])
					} else {
						clear(dst[at : at+size])
					}
				}
			}
		})
		return nil
	}
}
