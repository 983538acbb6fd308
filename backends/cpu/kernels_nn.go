package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Softmax-family, dropout and attention kernels. Softmax of dense f32 over
// the last axis, the shape of every attention and classifier head, runs on
// float32 rows in parallel through the row kernels (rows_simd.go): float32
// exponentials, float64 sums; everything else goes through float64 lines
// of any stride.

func init() {
	register("softmax", softmaxKernel(false))
	register("log_softmax", softmaxKernel(true))
	register("_softmax_backward", softmaxBackwardKernel(false))
	register("_log_softmax_backward", softmaxBackwardKernel(true))
	register("dropout", dropoutKernel)
	register("scaled_dot_product_attention", attentionKernel)
	register("_scaled_dot_product_attention_backward", attentionBackwardKernel)
}

// nnForLines calls fn for every line along the split axis: the offset of
// its first element in row-major order; elements are inner apart.
func nnForLines(outer, n, inner int, fn func(base int)) {
	parallelFor(outer*inner, n*8, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			fn((l/inner)*n*inner + l%inner)
		}
	})
}

func softmaxKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, err := oprules.SoftmaxAxis(in.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		outer, n, inner := axisSplit(in.Shape(), axis)
		if inner == 1 && denseF32(in) {
			src, dst := f32s(in), f32s(out)
			parallelFor(outer, n*8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					softmaxRowF32(src[r*n:(r+1)*n], dst[r*n:(r+1)*n], logOut)
				}
			})
			return nil
		}
		x := readF64(in)
		y := tempF64(len(x))
		nnForLines(outer, n, inner, func(base int) { softmaxLine(x, y, base, n, inner, logOut) })
		writeF64(out, y)
		return nil
	}
}

// softmaxRowF32 is the dense fast path. NaN wins the max so that a NaN
// anywhere in the row makes the whole row NaN, as in PyTorch.
func softmaxRowF32(x, y []float32, logOut bool) {
	if len(x) == 0 {
		return
	}
	m, nan := extremeF32(true, false, x)
	if nan {
		m = float32(math.NaN())
	}
	if logOut {
		s := expSumF32(nil, x, m)
		sub2F32(y, x, m, float32(math.Log(s)))
		return
	}
	s := expSumF32(y, x, m)
	axpbF32(y, y, float32(1/s), 0)
}

// softmaxLine is softmax (or log_softmax) of n elements stride apart; x and
// y may be the same slice.
func softmaxLine(x, y []float64, base, n, stride int, logOut bool) {
	if n == 0 {
		return
	}
	m := x[base]
	for j := 1; j < n; j++ {
		if v := x[base+j*stride]; v > m || v != v {
			m = v
		}
	}
	var sum float64
	if logOut {
		for j := 0; j < n; j++ {
			sum += math.Exp(x[base+j*stride] - m)
		}
		shift := m + math.Log(sum)
		for j := 0; j < n; j++ {
			p := base + j*stride
			y[p] = x[p] - shift
		}
		return
	}
	for j := 0; j < n; j++ {
		p := base + j*stride
		e := math.Exp(x[p] - m)
		y[p] = e
		sum += e
	}
	inv := 1 / sum
	for j := 0; j < n; j++ {
		y[base+j*stride] *= inv
	}
}

// softmaxBackwardKernel computes y*(g - sum(g*y)) for softmax and
// g - exp(y)*sum(g) for log_softmax, from the forward output y.
func softmaxBackwardKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		yt, gt, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		axis, err := oprules.SoftmaxAxis(yt.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		outer, n, inner := axisSplit(yt.Shape(), axis)
		if inner == 1 && denseF32(yt) && denseF32(gt) {
			y, g, dst := f32s(yt), f32s(gt), f32s(out)
			parallelFor(outer, n*4, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					softmaxBackwardRowF32(y[r*n:(r+1)*n], g[r*n:(r+1)*n], dst[r*n:(r+1)*n], logOut)
				}
			})
			return nil
		}
		y, g := readF64(yt), readF64(gt)
		dx := tempF64(len(y))
		nnForLines(outer, n, inner, func(base int) {
			var s float64
			for j := 0; j < n; j++ {
				p := base + j*inner
				if logOut {
					s += g[p]
				} else {
					s += g[p] * y[p]
				}
			}
			for j := 0; j < n; j++ {
				p := base + j*inner
				if logOut {
					dx[p] = g[p] - math.Exp(y[p])*s
				} else {
					dx[p] = y[p] * (g[p] - s)
				}
			}
		})
		writeF64(out, dx)
		return nil
	}
}

func softmaxBackwardRowF32(y, g, dx []float32, logOut bool) {
	if logOut {
		softmaxGradF32(true, dx, y, g, float32(sumF32(formSum, g)))
		return
	}
	_, gy := normDotsF32(y, g, nil, 0)
	softmaxGradF32(false, dx, y, g, float32(gy))
}

// dropoutKernel keeps element i (row-major) when its Philox uniform is at
// least p and scales it by 1/(1-p). Dropped elements are multiplied by 0, not
// set to 0, so NaN and inf propagate exactly as PyTorch's x*mask*scale does.
func dropoutKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	p := k.Attrs.Float("p")
	if !k.Attrs.Bool("training") {
		return copyKernel(k)
	}
	seed, offset := uint64(k.Attrs.Int("seed")), uint64(k.Attrs.Int("offset"))
	scale := 1 / (1 - p)
	// Element i is kept (times 1/(1-p)) when its uniform draw u, the top 24
	// bits of its Philox word over 2^24, is >= p - the stream every backend
	// and SDK shares, one block of four words per four elements. u is exact,
	// so the test is an integer one against ceil(p * 2^24), and branch-free:
	// kept or not is a coin flip, which a branch would mispredict half the
	// time. v>>8 - thr wraps around (bit 31 set) exactly when v>>8 < thr.
	thr := dropoutThreshold(p)
	factors := [2]float64{0, scale}
	key := [2]uint32{uint32(seed), uint32(seed >> 32)}
	n := in.Numel()
	if denseF32(in) && out.DType() == core.F32 {
		// f32 straight through: the product in float64 rounded once, as the
		// general path's write rounds it.
		x, y := f32s(in), f32s(out)
		philoxWords(n, key, offset, func(i int, words []uint32) {
			xs, ys := x[i:i+len(words)], y[i:i+len(words)]
			for l, v := range words {
				ys[l] = float32(float64(xs[l]) * factors[((v>>8-thr)>>31)^1])
			}
		})
		return nil
	}
	x := readF64(in)
	philoxWords(n, key, offset, func(i int, words []uint32) {
		xs := x[i : i+len(words)]
		for l, v := range words {
			xs[l] *= factors[((v>>8-thr)>>31)^1]
		}
	})
	writeF64(out, x)
	return nil
}

// philoxWordsChunk is how many elements' words philoxWords makes per call
// of its callback (a multiple of 8: two blocks per step).
const philoxWordsChunk = 1024

// philoxWords hands use the Philox words of n elements - element i's is
// word i%4 of the block at counter offset + i/4 under key, stream 0 - a
// chunk at a time with the chunk's first index, in parallel, two blocks per
// step (numerics.Philox4x32Pair).
func philoxWords(n int, key [2]uint32, offset uint64, use func(i int, words []uint32)) {
	ctr := func(b uint64) [4]uint32 { return [4]uint32{uint32(b), uint32(b >> 32), 0, 0} }
	chunks := (n + philoxWordsChunk - 1) / philoxWordsChunk
	parallelFor(chunks, 16*philoxWordsChunk, func(lo, hi int) {
		var words [philoxWordsChunk]uint32
		for c := lo; c < hi; c++ {
			i := c * philoxWordsChunk
			m := min(philoxWordsChunk, n-i)
			for j := 0; j < m; j += 8 {
				b := offset + uint64((i+j)/4)
				first, second := numerics.Philox4x32Pair(key, ctr(b), ctr(b+1))
				w := words[j : j+8 : j+8]
				w[0], w[1], w[2], w[3] = first[0], first[1], first[2], first[3]
				w[4], w[5], w[6], w[7] = second[0], second[1], second[2], second[3]
			}
			use(i, words[:m])
		}
	})
}

// dropoutThreshold is the least 24-bit draw k with k / 2^24 >= p (2^24,
// never, for p >= 1 or NaN; 0, always, for p <= 0).
func dropoutThreshold(p float64) uint32 {
	switch {
	case p != p || p >= 1:
		return 1 << 24
	case p <= 0:
		return 0
	}
	return uint32(math.Ceil(p * (1 << 24)))
}

// attentionCall holds an attention call's operands broadcast to the batch
// shape as float64, with the mask made additive (a false bool is -inf).
type attentionCall struct {
	oprules.SDPAShapes
	batch         int
	q, k, v, mask []float64
	scale         float64
	causal        bool
}

func readAttention(kc *core.KernelCall, mask *core.Tensor) (*attentionCall, error) {
	q, k, v := kc.Inputs[0], kc.Inputs[1], kc.Inputs[2]
	sh, err := oprules.AttentionShapes(q.Shape(), k.Shape(), v.Shape())
	if err != nil {
		return nil, err
	}
	at := &attentionCall{SDPAShapes: sh, batch: sh.Batch.Numel(),
		scale: kernelkit.AttentionScale(kc.Attrs, sh.E), causal: kc.Attrs.Bool("is_causal")}
	b := sh.Batch
	at.q = readF64As(q, append(b.Clone(), sh.L, sh.E))
	at.k = readF64As(k, append(b.Clone(), sh.S, sh.E))
	at.v = readF64As(v, append(b.Clone(), sh.S, sh.Ev))
	if mask != nil {
		at.mask = readF64As(mask, sh.Scores())
		if mask.DType() == core.Bool {
			for i, m := range at.mask {
				at.mask[i] = 0
				if m == 0 {
					at.mask[i] = math.Inf(-1)
				}
			}
		}
	}
	return at, nil
}

// probs fills p (S values) with the attention weights of query i of batch
// b. A row whose scores are all -inf gets zeros, as torch's safe softmax
// gives; a NaN score makes the row NaN.
func (at *attentionCall) probs(b, i int, p []float64) {
	qrow := at.q[(b*at.L+i)*at.E : (b*at.L+i+1)*at.E]
	masked := true
	for j := range p {
		if at.causal && j > i {
			p[j] = math.Inf(-1)
			continue
		}
		krow := at.k[(b*at.S+j)*at.E : (b*at.S+j+1)*at.E]
		var s float64
		for e, qv := range qrow {
			s += qv * krow[e]
		}
		s *= at.scale
		if at.mask != nil {
			s += at.mask[(b*at.L+i)*at.S+j]
		}
		p[j] = s
		masked = masked && math.IsInf(s, -1)
	}
	if masked {
		clear(p)
		return
	}
	softmaxLine(p, p, 0, len(p), 1, false)
}

func attentionKernel(k *core.KernelCall) error {
	at, err := readAttention(k, k.Inputs[3])
	if err != nil {
		return err
	}
	L, S, Ev := at.L, at.S, at.Ev
	out := tempF64(at.batch * L * Ev)
	parallelFor(at.batch*L, S*(at.E+Ev)*2, func(lo, hi int) {
		p := make([]float64, S)
		for r := lo; r < hi; r++ {
			b, i := r/L, r%L
			at.probs(b, i, p)
			orow := out[r*Ev : (r+1)*Ev]
			for j, pj := range p {
				vrow := at.v[(b*S+j)*Ev : (b*S+j+1)*Ev]
				for e, vv := range vrow {
					orow[e] += pj * vv
				}
			}
		}
	})
	writeF64(k.Outputs[0], out)
	return nil
}

// attentionBackwardKernel: with P the weights and dP = g v^T,
// dS = P*(dP - rowsum(P*dP)); dq = scale dS k, dk = scale dS^T q, dv = P^T g,
// and dS itself is the gradient of an additive mask.
func attentionBackwardKernel(k *core.KernelCall) error {
	at, err := readAttention(k, k.Inputs[4])
	if err != nil {
		return err
	}
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	g := readF64(k.Inputs[3])
	P, dS, dq := tempF64(at.batch*L*S), tempF64(at.batch*L*S), tempF64(at.batch*L*E)
	parallelFor(at.batch*L, S*(E+Ev)*3, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/L, r%L
			p, ds, grow := P[r*S:(r+1)*S], dS[r*S:(r+1)*S], g[r*Ev:(r+1)*Ev]
			at.probs(b, i, p)
			var total float64
			for j := range ds {
				vrow := at.v[(b*S+j)*Ev : (b*S+j+1)*Ev]
				var d float64
				for e, gv := range grow {
					d += gv * vrow[e]
				}
				ds[j] = d
				total += p[j] * d
			}
			qrow := dq[r*E : (r+1)*E]
			for j := range ds {
				ds[j] = p[j] * (ds[j] - total)
				krow := at.k[(b*S+j)*E : (b*S+j+1)*E]
				for e, kv := range krow {
					qrow[e] += at.scale * ds[j] * kv
				}
			}
		}
	})
	dk, dv := tempF64(at.batch*S*E), tempF64(at.batch*S*Ev)
	parallelFor(at.batch*S, L*(E+Ev)*2, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, j := r/S, r%S
			krow, vrow := dk[r*E:(r+1)*E], dv[r*Ev:(r+1)*Ev]
			for i := 0; i < L; i++ {
				row := b*L + i
				c := at.scale * dS[row*S+j]
				for e, qv := range at.q[row*E : (row+1)*E] {
					krow[e] += c * qv
				}
				pij := P[row*S+j]
				for e, gv := range g[row*Ev : (row+1)*Ev] {
					vrow[e] += pij * gv
				}
			}
		}
	})
	writeF64(k.Outputs[0], dq)
	writeF64(k.Outputs[1], dk)
	writeF64(k.Outputs[2], dv)
	if len(k.Outputs) == 4 {
		writeF64(k.Outputs[3], dS)
	}
	return nil
}
