package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func attentionTile16AVX512(qt *float32, e int, k *float32, ldk int, v *float32, ldv int, ev int, s int, scale2 float32, scores *float32, out *float32, bias *float32)

//go:noescape
func attentionTile16x32AVX512(qt *float32, k *float32, ldk int, v *float32, ldv int, s int, scale2 float32, scores *float32, out *float32, bias *float32)

func init() {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ {
		attentionTile16 = func(qt []float32, e int, k []float32, ldk int, v []float32, ldv, ev, s int, scale2 float32, scores, out, bias []float32) {
			// The assembly trusts its pointers: check the extents it reads
			// and writes here, where a short slice panics instead.
			_, _, _ = qt[e*16-1], k[(s-1)*ldk+e-1], v[(s-1)*ldv+ev-1]
			_, _ = scores[s*16-1], out[ev*16-1]
			var b *float32 // nil: no bias
			if bias != nil {
				_ = bias[s-1]
				b = unsafe.SliceData(bias)
			}
			if e == 32 {
				attentionTile16x32AVX512(unsafe.SliceData(qt), unsafe.SliceData(k), ldk, unsafe.SliceData(v), ldv, s, scale2,
					unsafe.SliceData(scores), unsafe.SliceData(out), b)
				return
			}
			attentionTile16AVX512(unsafe.SliceData(qt), e, unsafe.SliceData(k), ldk, unsafe.SliceData(v), ldv, ev, s, scale2,
				unsafe.SliceData(scores), unsafe.SliceData(out), b)
		}
	}
}
