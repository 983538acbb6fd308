package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/wgsl"
)

// fftRun runs one mode of wgsl/spectral.wgsl over threads outputs. Complex
// tensors are real tensors with a trailing pair dim; axis counts over the
// complex dims.
func (g *Backend) fftRun(mode string, real bool, x, out *core.Tensor, axis, l, n, bins int, scale, sign float64, threads int) error {
	if threads == 0 {
		return nil
	}
	// Each output is a direct sum over the input along the axis, one step
	// per term: a length past the device's loop limit (gpu_looplimit.go) is
	// refused, not cut short.
	terms := map[string]int{"c2c": min(l, n), "c2r": min(bins, l)}[mode]
	if err := g.checkTrips(fmt.Sprintf("a Fourier transform of length %d (a direct sum per bin)", n), terms+16); err != nil {
		return err
	}
	x = x.Contiguous()
	if err := x.Err(); err != nil {
		return err
	}
	sh := x.Shape()
	cplxDims := len(sh)
	if mode == "c2c" && !real || mode == "c2r" {
		cplxDims--
	}
	outer, inner := 1, 1
	for d := 0; d < axis; d++ {
		outer *= sh[d]
	}
	for d := axis + 1; d < cplxDims; d++ {
		inner *= sh[d]
	}
	dt := out.DType()
	key := fmt.Sprintf("fft|%s|%v|%s", mode, real, dt)
	p, err := g.pipelineFor(key, 1, 1, func() (string, error) {
		return wgsl.Render("spectral", map[string]any{"WG": mapWG, "Mode": mode, "Real": real, "Out": physical(dt),
			"Store": func(e string) string { return storeExpr(dt, e) }})
	})
	if err != nil {
		return err
	}
	var prm params
	prm.setI(0, outer)
	prm.setI(1, l)
	prm.setI(2, n)
	prm.setI(3, inner)
	prm.setF(4, scale)
	prm.setF(5, sign)
	prm.setI(6, x.Offset())
	prm.setI(7, bins)
	prm.setI(wgsl.SlotN, threads)
	bufs, err := buffers(x, out)
	if err != nil {
		return err
	}
	return g.run(p, &prm, threads, mapWG, bufs...)
}

func fftAxisOf(k *core.KernelCall, rank int) (int, error) {
	return core.NormAxis(k.Attrs.Int("axis"), rank)
}

func complexFFTKernel(inverse bool) core.Kernel {
	return func(k *core.KernelCall) error {
		x, out := k.Inputs[0], k.Outputs[0]
		axis, err := fftAxisOf(k, x.Rank()-1)
		if err != nil {
			return err
		}
		l, n := x.Shape()[axis], out.Shape()[axis]
		sign := -1.0
		if inverse {
			sign = 1
		}
		scale := kernelkit.FFTScale(k.Attrs.String("norm"), n, inverse)
		return gpuOf(k).fftRun("c2c", false, x, out, axis, l, n, n, scale, sign, out.Numel()/2)
	}
}

func rfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis, err := fftAxisOf(k, x.Rank())
	if err != nil {
		return err
	}
	l := x.Shape()[axis]
	n := l
	if k.Attrs.Has("n") {
		n = k.Attrs.Int("n")
	}
	bins := out.Shape()[axis]
	scale := kernelkit.FFTScale(k.Attrs.String("norm"), n, false)
	return gpuOf(k).fftRun("c2c", true, x, out, axis, l, n, bins, scale, -1, out.Numel()/2)
}

// irfftKernel sums the Hermitian completion of the bins (dropping the
// imaginary parts of DC and, for even n, Nyquist, as pocketfft does).
func irfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis, err := fftAxisOf(k, x.Rank()-1)
	if err != nil {
		return err
	}
	m, n := x.Shape()[axis], out.Shape()[axis]
	scale := kernelkit.FFTScale(k.Attrs.String("norm"), n, true)
	return gpuOf(k).fftRun("c2r", false, x, out, axis, m, n, n/2+1, scale, 1, out.Numel())
}

// resizeAxisKernel keeps the common prefix of the axis and zero-pads.
func resizeAxisKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis, err := fftAxisOf(k, x.Rank())
	if err != nil {
		return err
	}
	return gpuOf(k).fftRun("resize", true, x, out, axis, x.Shape()[axis], out.Shape()[axis], 0, 1, 1, out.Numel())
}

func init() {
	register("fft", complexFFTKernel(false))
	register("ifft", complexFFTKernel(true))
	register("rfft", rfftKernel)
	register("irfft", irfftKernel)
	register("_resize_axis", resizeAxisKernel)
}
