//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// fft, ifft, rfft, irfft and _resize_axis with the CPU backend's
// algorithms and normalisation (backends/cpu/kernels_spectral.go): a radix-2
// transform for powers of two and Bluestein's chirp-z convolution (over
// the power of two m >= 2n-1) for other lengths; an inverse is the
// conjugate of the forward transform of the conjugate, as there. f32
// tensors are transformed in f32, f64 in f64, twiddles computed in f64.
//
// A line whose transform fits in shared memory (a power of two up to
// fftCap, or a Bluestein length up to fftCap/2 of which the filter takes
// the other half) is transformed whole by one block, several short lines
// per block, in one launch: loaded (zero-padded or trimmed, Hermitian-
// completed for irfft) straight from the input through its strides, and
// stored scaled. Longer lines go through a global buffer: radix-2 passes
// (one launch per stage) until the sub-transforms fit a block, one block
// kernel for the rest, and for Bluestein the spectrum product and the
// inverse's first stages in that same kernel before the passes back.

var fftLib = mustRead("cu/fft.cuh")

func init() {
	register("fft", complexFFTKernel("fft", false))
	register("ifft", complexFFTKernel("ifft", true))
	register("rfft", rfftKernel)
	register("irfft", irfftKernel)
	register("_resize_axis", resizeAxisKernel)
}

type fftMode string

const (
	c2c fftMode = "cc"
	r2c fftMode = "rc"
	c2r fftMode = "cr"
)

// fftJob is one transform along axis of every line of x into out.
type fftJob struct {
	op      string
	mode    fftMode
	x, out  *core.Tensor
	axis    int
	n       int // transform length
	lin     int // input length along the axis (bins for c2r)
	nout    int // outputs per line (bins for r2c)
	inverse bool
	scale   float64
}

// fftCap is how many complex values of a dtype a block holds (16 KB).
func fftCap(d core.DType) int {
	if d == core.F64 {
		return 1024
	}
	return 2048
}

func (b *Backend) fft(j fftJob) error {
	cin, cout := j.mode != r2c, j.mode != c2r
	kept := keptShape(j.x.Shape(), j.axis, cin)
	lk, err := newLanes(j.op, kept, laneWalk(j.x, j.axis, cin, false), laneWalk(j.out, j.axis, cout, true))
	if err != nil {
		return err
	}
	lines := lk.lanes()
	if lines == 0 || j.nout == 0 {
		return nil
	}
	pow2 := j.n&(j.n-1) == 0
	m := j.n
	if !pow2 {
		if j.n >= 1<<30 {
			return fmt.Errorf("cuda: %s: length %d; Bluestein's transform takes lengths below 2^30", j.op, j.n)
		}
		m = nextPow2(2*j.n - 1)
	}
	lk.s[0], lk.s[1], lk.s[2], lk.s[3] = int64(j.n), int64(j.lin), int64(j.nout), int64(m)
	if !pow2 {
		lk.s[5] = 1
	}
	if j.inverse {
		lk.s[6] = 1
	}
	lk.s[7] = int64(math.Float64bits(j.scale))
	limit := fftCap(j.x.DType())
	if !pow2 {
		limit /= 2
	}
	if m <= limit {
		g := limit / m
		lk.s[4] = int64(g)
		return b.runLanes(lk, j.key("whole"), b.blocksFor(int64((lines+g-1)/g), laneBlock), func() string { return j.wholeSource(lk) })
	}
	return b.fftLarge(j, lk, lines, m, pow2)
}

// key names one of the job's kernels (runLanes adds the operands).
func (j *fftJob) key(kind string) string { return "fft" + kind + "|" + string(j.mode) }

// real is the C++ type the job computes in.
func (j *fftJob) real() string { return storageType(j.x.DType()) }

// load is C++ that sets v (zero before) to input element t of the line
// whose start in x is xb: zero-padded past the input, and for c2r the
// Hermitian completion of the bins (imaginary parts of DC and Nyquist
// dropped, as pocketfft's c2r does).
func (j *fftJob) load(t string) string {
	el := "p0[xb + " + t + " * WT_ALONG(0)"
	switch j.mode {
	case r2c:
		return "if (" + t + " < lin) v = cpx((T)ld(" + el + "]), (T)0);\n"
	case c2r:
		return "{\nconst idx bins = n / 2 + 1;\nconst bool mirror = " + t + " >= bins;\nconst idx f = mirror ? n - " + t + " : " + t + ";\n" +
			"if (f < lin) {\nconst idx o = xb + f * WT_ALONG(0);\nv = cpx((T)ld(p0[o]), (f == 0 || 2 * f == n) ? (T)0 : (T)ld(p0[o + WT_PAIR(0)]));\nif (mirror) v = cconj(v);\n}\n}\n"
	}
	return "if (" + t + " < lin) v = cpx((T)ld(" + el + "]), (T)ld(" + el + " + WT_PAIR(0)]));\n"
}

// store is C++ that writes v as output k of the line whose start in out
// is ob.
func (j *fftJob) store() string {
	el := "p1[ob + k * WT_ALONG(1)"
	if j.mode == c2r {
		return "put(&" + el + "], v.re);\n"
	}
	return "put(&" + el + "], v.re);\nput(&" + el + " + WT_PAIR(1)], v.im);\n"
}

// head declares the job's parameters.
func (j *fftJob) head(lk *laneKernel) string {
	return lk.prologue(fftLib) + "typedef " + j.real() + " T;\n" + fmt.Sprintf("constexpr int CAP = %d;\n", fftCap(j.x.DType())) +
		`const idx lines = (idx)A.n, n = (idx)A.s[0], lin = (idx)A.s[1], nout = (idx)A.s[2], M = (idx)A.s[3];
const bool blue = A.s[5] != 0, inv = A.s[6] != 0;
const T scale = (T)__longlong_as_double(A.s[7]);
const int lg = wt_log2(M);
`
}

// wholeSource transforms G lines per block in shared memory.
func (j *fftJob) wholeSource(lk *laneKernel) string {
	var sb strings.Builder
	sb.WriteString(j.head(lk))
	sb.WriteString(`__shared__ Cpx<T> d[CAP];
__shared__ Cpx<T> tw[CAP / 2];
__shared__ Cpx<T> ch[CAP / 4];
const int G = (int)A.s[4], m = (int)M, used = G * m;
Cpx<T>* f = d + CAP / 2;
wt_twiddles<T>(tw, m);
if (blue) {
for (int t = threadIdx.x; t < n; t += blockDim.x) ch[t] = wt_chirp<T>(t, n);
for (int t = threadIdx.x; t < m; t += blockDim.x) f[t] = wt_filter_at<T>(t, n, m);
__syncthreads();
wt_dif<T>(f, tw, m, m, m);
}
const idx jobs = (lines + G - 1) / G;
for (idx job = blockIdx.x; job < jobs; job += gridDim.x) {
for (int t = threadIdx.x; t < used; t += blockDim.x) {
const int g = t / m, q = t - g * m;
const idx line = job * G + g;
Cpx<T> v = cpx((T)0, (T)0);
if (line < lines && q < n) {
const idx xb = wt_lane<KR>(A, 0, line);
`)
	sb.WriteString(j.load("(idx)q"))
	sb.WriteString(`if (inv) v = cconj(v);
if (blue) v = cmul(v, ch[q]);
}
d[t] = v;
}
__syncthreads();
wt_dif<T>(d, tw, m, used, m);
if (blue) {
const T im = (T)1 / (T)m;
for (int t = threadIdx.x; t < used; t += blockDim.x) d[t] = cscale(cmul(d[t], f[t % m]), im);
__syncthreads();
wt_dit_inv<T>(d, tw, m, used, m);
}
for (int t = threadIdx.x; t < G * (int)nout; t += blockDim.x) {
const int g = t / (int)nout;
const idx k = t - g * (int)nout, line = job * G + g;
if (line >= lines) continue;
Cpx<T> v = blue ? cmul(d[g * m + k], ch[k]) : d[g * m + wt_bitrev((u32)k, lg)];
if (inv) v = cconj(v);
v = cscale(v, scale);
const idx ob = wt_lane<KR>(A, 1, line);
`)
	sb.WriteString(j.store())
	sb.WriteString("}\n__syncthreads();\n}\n}\n")
	return sb.String()
}

// fftLarge transforms lines too long for one block through a global
// buffer w of lines x m values (and the filter's m for Bluestein).
func (b *Backend) fftLarge(j fftJob, lk *laneKernel, lines, m int, pow2 bool) error {
	size := 8
	if j.x.DType() == core.F64 {
		size = 16
	}
	w, err := b.scratch(lines*m*size, core.U8)
	if err != nil {
		return err
	}
	defer w.Release()
	block := fftCap(j.x.DType())
	lk = lk.with(flatOp(w, true))
	if !pow2 {
		f, err := b.scratch(m*size, core.U8)
		if err != nil {
			return err
		}
		defer f.Release()
		lk = lk.with(flatOp(f, true))
		// The filter's transform: one line.
		fl := lk.with()
		if err := b.runLanes(fl, j.key("filt"), b.gridFor(int64(m), laneBlock), func() string {
			return j.head(fl) + "Cpx<T>* F = (Cpx<T>*)A.buf[3];\nfor (idx t = (idx)blockIdx.x * blockDim.x + threadIdx.x; t < M; t += (idx)gridDim.x * blockDim.x) F[t] = wt_filter_at<T>(t, n, M);\n}\n"
		}); err != nil {
			return err
		}
		if err := b.fftStages(j, fl, 1, m, block, 3, false); err != nil {
			return err
		}
	}
	if err := b.runLanes(lk, j.key("load"), b.gridFor(int64(lines*m), laneBlock), func() string {
		return j.head(lk) + "Cpx<T>* W = (Cpx<T>*)A.buf[2];\n" +
			"for (idx i = (idx)blockIdx.x * blockDim.x + threadIdx.x; i < lines * M; i += (idx)gridDim.x * blockDim.x) {\n" +
			"const idx line = i / M, q = i - line * M;\nCpx<T> v = cpx((T)0, (T)0);\nif (q < n) {\nconst idx xb = wt_lane<KR>(A, 0, line);\n" +
			j.load("q") + "if (inv) v = cconj(v);\nif (blue) v = cmul(v, wt_chirp<T>(q, n));\n}\nW[i] = v;\n}\n}\n"
	}); err != nil {
		return err
	}
	if err := b.fftStages(j, lk, lines, m, block, 2, !pow2); err != nil {
		return err
	}
	return b.runLanes(lk, j.key("store"), b.gridFor(int64(lines*j.nout), laneBlock), func() string {
		return j.head(lk) + "const Cpx<T>* W = (const Cpx<T>*)A.buf[2];\n" +
			"for (idx i = (idx)blockIdx.x * blockDim.x + threadIdx.x; i < lines * nout; i += (idx)gridDim.x * blockDim.x) {\n" +
			"const idx line = i / nout, k = i - line * nout;\n" +
			"Cpx<T> v = blue ? cmul(W[line * M + k], wt_chirp<T>(k, n)) : W[line * M + wt_bitrev((u32)k, lg)];\n" +
			"if (inv) v = cconj(v);\nv = cscale(v, scale);\nconst idx ob = wt_lane<KR>(A, 1, line);\n" + j.store() + "}\n}\n"
	})
}

// fftStages transforms the lines x m values of operand buf in place:
// decimation-in-frequency passes of spans m down to 2*block, then a block
// kernel for the spans below; with convolve (Bluestein) that kernel also
// multiplies by the filter (operand 3) and runs the inverse's spans up to
// block, and decimation-in-time passes finish the inverse.
func (b *Backend) fftStages(j fftJob, lk *laneKernel, lines, m, block, buf int, convolve bool) error {
	pass := func(span int, dit bool) error {
		p := lk.with()
		p.s[9], p.s[10], p.s[11] = int64(span), int64(lines), int64(buf)
		key := j.key("dif")
		if dit {
			key = j.key("dit")
		}
		return b.runLanes(p, key, b.gridFor(int64(lines*m/2), laneBlock), func() string {
			var sb strings.Builder
			sb.WriteString(j.head(p))
			sb.WriteString(`Cpx<T>* W = (Cpx<T>*)A.buf[A.s[11]];
const idx s = (idx)A.s[9], h = s / 2, nl = (idx)A.s[10];
for (idx b = (idx)blockIdx.x * blockDim.x + threadIdx.x; b < nl * (M / 2); b += (idx)gridDim.x * blockDim.x) {
const idx line = b / (M / 2), bb = b - line * (M / 2), g = bb / h, k = bb - g * h;
const idx i = line * M + g * s + k, jj = i + h;
const Cpx<T> w = wt_twiddle<T>(k, s);
const Cpx<T> a = W[i], c = W[jj];
`)
			if dit {
				sb.WriteString("const Cpx<T> t = cmul(c, cconj(w));\nW[i] = cadd(a, t);\nW[jj] = csub(a, t);\n")
			} else {
				sb.WriteString("W[i] = cadd(a, c);\nW[jj] = cmul(csub(a, c), w);\n")
			}
			sb.WriteString("}\n}\n")
			return sb.String()
		})
	}
	for span := m; span > block; span /= 2 {
		if err := pass(span, false); err != nil {
			return err
		}
	}
	bk := lk.with()
	bk.s[10], bk.s[11] = int64(lines), int64(buf)
	if convolve {
		bk.s[12] = 1
	}
	chunks := lines * m / block
	if err := b.runLanes(bk, j.key("block"), b.blocksFor(int64(chunks), laneBlock), func() string {
		return j.head(bk) + `__shared__ Cpx<T> d[CAP];
__shared__ Cpx<T> tw[CAP / 2];
Cpx<T>* W = (Cpx<T>*)A.buf[A.s[11]];
const Cpx<T>* F = (const Cpx<T>*)A.buf[3];
const bool conv = A.s[12] != 0;
wt_twiddles<T>(tw, CAP);
const idx chunks = (idx)A.s[10] * (M / CAP);
for (idx c = blockIdx.x; c < chunks; c += gridDim.x) {
for (int t = threadIdx.x; t < CAP; t += blockDim.x) d[t] = W[c * CAP + t];
__syncthreads();
wt_dif<T>(d, tw, CAP, CAP, CAP);
if (conv) {
const T im = (T)1 / (T)M;
const idx fb = (c % (M / CAP)) * CAP;
for (int t = threadIdx.x; t < CAP; t += blockDim.x) d[t] = cscale(cmul(d[t], F[fb + t]), im);
__syncthreads();
wt_dit_inv<T>(d, tw, CAP, CAP, CAP);
}
for (int t = threadIdx.x; t < CAP; t += blockDim.x) W[c * CAP + t] = d[t];
__syncthreads();
}
}
`
	}); err != nil {
		return err
	}
	if !convolve {
		return nil
	}
	for span := 2 * block; span <= m; span *= 2 {
		if err := pass(span, true); err != nil {
			return err
		}
	}
	return nil
}

func fftAxisOf(k *core.KernelCall, rank int) int {
	axis, _ := core.NormAxis(k.Attrs.Int("axis"), rank)
	return axis
}

func complexFFTKernel(op string, inverse bool) core.Kernel {
	return func(k *core.KernelCall) error {
		x, out := k.Inputs[0], k.Outputs[0]
		axis := fftAxisOf(k, x.Rank()-1)
		l, n := x.Shape()[axis], out.Shape()[axis]
		return cudaOf(k).fft(fftJob{op: op, mode: c2c, x: x, out: out, axis: axis, n: n, lin: l, nout: n, inverse: inverse,
			scale: kernelkit.FFTScale(k.Attrs.String("norm"), n, inverse)})
	}
}

func rfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis := fftAxisOf(k, x.Rank())
	l := x.Shape()[axis]
	n := l
	if k.Attrs.Has("n") {
		n = k.Attrs.Int("n")
	}
	return cudaOf(k).fft(fftJob{op: "rfft", mode: r2c, x: x, out: out, axis: axis, n: n, lin: l, nout: out.Shape()[axis],
		scale: kernelkit.FFTScale(k.Attrs.String("norm"), n, false)})
}

func irfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis := fftAxisOf(k, x.Rank()-1)
	n := out.Shape()[axis]
	return cudaOf(k).fft(fftJob{op: "irfft", mode: c2r, x: x, out: out, axis: axis, n: n, lin: x.Shape()[axis], nout: n, inverse: true,
		scale: kernelkit.FFTScale(k.Attrs.String("norm"), n, true)})
}

// resizeAxisKernel copies the common prefix of the axis (raw elements) and
// zero-fills the rest.
func resizeAxisKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis := fftAxisOf(k, x.Rank())
	g := &genKernel{op: "_resize_axis", shape: out.Shape(), ops: []genOp{written(out), walkOf(x, out.Shape())}}
	g.param(0, int64(x.Shape()[axis]))
	ax := g.coalesce(axis)
	return cudaOf(k).runIndexedKeyed(g, "resize|"+strconv.Itoa(ax), func() string {
		return fmt.Sprintf("p0[%s] = c%d < (idx)A.s[0] ? p1[%s] : %s;", g.at(0), ax, g.at(1), zeroElem(out.DType()))
	})
}
