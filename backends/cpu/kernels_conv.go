package cpu

import (
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Convolution kernels. Every op is one of three products over a ConvGeom
// (see core/ops_conv.go): grid from image (conv2d, conv1d, the transposed
// input gradient), image from grid (conv_transpose2d) and weight from image
// and grid gradient.

func init() {
	register("conv2d", convKernel(oprules.Conv2dGeom, runGridF32, runGrid[float64]))
	register("conv1d", convKernel(oprules.Conv1dGeom, runGridF32, runGrid[float64]))
	register("_conv_transpose2d_input_grad", convKernel(oprules.ConvTransposeInputGradGeom, runGridF32, runGrid[float64]))
	register("conv_transpose2d", convKernel(oprules.ConvTranspose2dGeom, runImageF32, runImage[float64]))
	register("_conv2d_weight_grad", convKernel(oprules.ConvWeightGradGeom, runWeightGradF32, runWeightGrad[float64]))
}

// packedFits reports whether the packed path applies: it needs the gemm's
// micro-kernel and a product of non-zero size on every side; an empty dim
// (the fuzzer's [1 0 1 1] weight: a depth of 0) is the generic path's,
// which writes the bias or zeros.
func packedFits(g *oprules.ConvGeom) bool {
	return convPacked() && g.Batch > 0 && g.Groups > 0 && g.ImageC > 0 && g.GridC > 0 &&
		g.Image[0]*g.Image[1] > 0 && g.Grid[0]*g.Grid[1] > 0 && g.Kernel[0]*g.Kernel[1] > 0
}

// runGridF32, runImageF32 and runWeightGradF32 take the packed path
// (conv_packed.go) where it applies, else the generic float32 one.
func runGridF32(k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[float32]) {
	if !packedFits(g) {
		runGrid(k, g, gemm)
		return
	}
	out := k.Outputs[0]
	grid, w := resultAs[float32](out), windowOf(g)
	convForwardPacked(&w, g.Batch, g.Groups, g.ImageC/g.Groups, g.GridC/g.Groups,
		loadAs[float32](k.Inputs[0]), loadAs[float32](k.Inputs[1]), bias[float32](k), grid)
	storeAs(out, grid)
}

func runImageF32(k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[float32]) {
	if !packedFits(g) || g.Stride != [2]int{1, 1} {
		runImage(k, g, gemm)
		return
	}
	out := k.Outputs[0]
	image := resultAs[float32](out)
	w, flipped := transposedAsForward(g, loadAs[float32](k.Inputs[1]))
	convForwardPacked(&w, g.Batch, g.Groups, g.GridC/g.Groups, g.ImageC/g.Groups,
		loadAs[float32](k.Inputs[0]), flipped, bias[float32](k), image)
	storeAs(out, image)
}

func runWeightGradF32(k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[float32]) {
	if !packedFits(g) {
		runWeightGrad(k, g, gemm)
		return
	}
	out := k.Outputs[0]
	dw, w := resultAs[float32](out), windowOf(g)
	convWeightGradPacked(&w, g.Batch, g.Groups, g.ImageC/g.Groups, g.GridC/g.Groups,
		loadAs[float32](k.Inputs[0]), loadAs[float32](k.Inputs[1]), dw)
	storeAs(out, dw)
}

// convGeomFunc resolves the geometry of an op from its first two inputs.
type convGeomFunc func(a, b core.Shape, attrs core.Attrs) (oprules.ConvGeom, error)

// convKernel resolves the geometry and runs the f64 instantiation for f64
// outputs, the f32 one (f16 and bf16 compute in f32) for everything else.
func convKernel(geom convGeomFunc, f32 func(*core.KernelCall, *oprules.ConvGeom, gemms[float32]),
	f64 func(*core.KernelCall, *oprules.ConvGeom, gemms[float64])) core.Kernel {
	return func(k *core.KernelCall) error {
		g, err := geom(k.Inputs[0].Shape(), k.Inputs[1].Shape(), k.Attrs)
		if err != nil {
			return err
		}
		if k.Outputs[0].DType() == core.F64 {
			f64(k, &g, gemmsF64)
		} else {
			f32(k, &g, gemmsF32)
		}
		return nil
	}
}

// bias returns the optional third input in precision T, or nil.
func bias[T convFloat](k *core.KernelCall) []T {
	if len(k.Inputs) > 2 && k.Inputs[2] != nil {
		return loadAs[T](k.Inputs[2])
	}
	return nil
}

func runGrid[T convFloat](k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[T]) {
	out := k.Outputs[0]
	grid := resultAs[T](out)
	convGrid(g, loadAs[T](k.Inputs[0]), loadAs[T](k.Inputs[1]), bias[T](k), grid, gemm)
	storeAs(out, grid)
}

func runImage[T convFloat](k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[T]) {
	out := k.Outputs[0]
	image := resultAs[T](out)
	convImage(g, loadAs[T](k.Inputs[0]), loadAs[T](k.Inputs[1]), bias[T](k), image, gemm)
	storeAs(out, image)
}

func runWeightGrad[T convFloat](k *core.KernelCall, g *oprules.ConvGeom, gemm gemms[T]) {
	out := k.Outputs[0]
	dw := resultAs[T](out)
	convWeightGrad(g, loadAs[T](k.Inputs[0]), loadAs[T](k.Inputs[1]), dw, gemm)
	storeAs(out, dw)
}

// gemms are one precision's products: parallel spreads one product over
// the cores, serial stays on the calling goroutine for tasks that already
// run in parallel.
type gemms[T convFloat] struct{ parallel, serial gemmFunc[T] }

var (
	gemmsF32 = gemms[float32]{parallel: gemmF32, serial: gemmF32Serial}
	gemmsF64 = gemms[float64]{parallel: convGemmF64, serial: convGemmF64}
)

// run runs tasks [0, n) of the given cost each: spread over the cores with
// the serial product when there are enough of them, else in order with the
// parallel product, so one large image still uses every core.
func (g gemms[T]) run(n, cost int, task func(lo, hi int, gemm gemmFunc[T])) {
	if n >= NumThreads() {
		parallelFor(n, cost, func(lo, hi int) { task(lo, hi, g.serial) })
		return
	}
	task(0, n, g.parallel)
}

// convShape is the per-group view of a geometry that the products share.
type convShape struct {
	w          window
	imageC     int // image channels per group
	gridC      int // grid channels per group
	rows       int // im2col rows: imageC*kh*kw
	imageSize  int // elements of one image plane
	gridSize   int // window positions
	units      int // batch items x groups, each an independent product
	blk, nblks int // grid columns per task and tasks per unit
}

func shapeOf(g *oprules.ConvGeom) convShape {
	s := convShape{w: windowOf(g), imageC: g.ImageC / g.Groups, gridC: g.GridC / g.Groups, units: g.Batch * g.Groups}
	s.rows = s.imageC * s.w.kh * s.w.kw
	s.imageSize, s.gridSize = s.w.ih*s.w.iw, s.w.gh*s.w.gw
	s.blk = blockCols(s.rows, s.gridSize)
	s.nblks = (s.gridSize + s.blk - 1) / s.blk
	return s
}

// scratchAs allocates one task's im2col block, none for pointwise windows.
func scratchAs[T convFloat](s *convShape) []T {
	if s.w.pointwise() {
		return nil
	}
	return make([]T, s.rows*s.blk)
}

// convGrid computes grid = weight x im2col(image) (+ bias) for every batch
// item and group. Tasks are column blocks of one unit, so the unfolded block
// is reused from cache by the product and tasks never share output.
func convGrid[T convFloat](g *oprules.ConvGeom, image, weight, bias, grid []T, gemm gemms[T]) {
	s := shapeOf(g)
	if s.gridSize == 0 || s.units == 0 {
		return
	}
	gemm.run(s.units*s.nblks, s.gridC*s.rows*s.blk, func(lo, hi int, product gemmFunc[T]) {
		cols := scratchAs[T](&s)
		for t := lo; t < hi; t++ {
			u, j0 := t/s.nblks, (t%s.nblks)*s.blk
			j1 := min(j0+s.blk, s.gridSize)
			n, grp := u/g.Groups, u%g.Groups
			src := image[(n*g.ImageC+grp*s.imageC)*s.imageSize:]
			dst := grid[(n*g.GridC+grp*s.gridC)*s.gridSize+j0:]
			b, ldb := unfoldAs(&s, src, j0, j1, cols)
			product(false, false, s.gridC, j1-j0, s.rows, 1, weight[grp*s.gridC*s.rows:], s.rows, b, ldb, 0, dst, s.gridSize)
			if bias == nil {
				continue
			}
			for o := 0; o < s.gridC; o++ {
				bv := bias[grp*s.gridC+o]
				row := dst[o*s.gridSize:][:j1-j0]
				for i := range row {
					row[i] += bv
				}
			}
		}
	})
}

// unfoldAs returns the im2col matrix of grid columns [j0, j1) of one unit's
// image and its row stride: the image itself when the window is pointwise,
// else cols filled by im2col.
func unfoldAs[T convFloat](s *convShape, image []T, j0, j1 int, cols []T) ([]T, int) {
	if s.w.pointwise() {
		return image[j0:], s.imageSize
	}
	im2colBlock(&s.w, image, s.imageC, j0, j1, cols)
	return cols, j1 - j0
}

// convImage computes image = col2im(weightᵀ x grid) (+ bias): every window
// position scatters back over the image. A unit's column blocks run in
// order, since neighbouring windows add into the same pixels; with many
// units each core takes whole units, else the product spreads over the
// cores and the scatter over image channels, whose planes are disjoint.
func convImage[T convFloat](g *oprules.ConvGeom, grid, weight, bias, image []T, gemm gemms[T]) {
	s := shapeOf(g)
	clear(image)
	if s.units == 0 || s.imageSize == 0 {
		return
	}
	unit := func(u int, cols []T, product gemmFunc[T], channels func(n, cost int, fn func(lo, hi int))) {
		n, grp := u/g.Groups, u%g.Groups
		src := grid[(n*g.GridC+grp*s.gridC)*s.gridSize:]
		dst := image[(n*g.ImageC+grp*s.imageC)*s.imageSize:][:s.imageC*s.imageSize]
		w := weight[grp*s.gridC*s.rows:]
		for j0 := 0; j0 < s.gridSize; j0 += s.blk {
			j1 := min(j0+s.blk, s.gridSize)
			if cols == nil {
				// Pointwise: the product lands on the image directly.
				product(true, false, s.rows, j1-j0, s.gridC, 1, w, s.rows, src[j0:], s.gridSize, 0, dst[j0:], s.imageSize)
				continue
			}
			product(true, false, s.rows, j1-j0, s.gridC, 1, w, s.rows, src[j0:], s.gridSize, 0, cols, j1-j0)
			channels(s.imageC, s.w.kh*s.w.kw*(j1-j0), func(lo, hi int) {
				for ci := lo; ci < hi; ci++ {
					col2imBlock(&s.w, cols, ci, j0, j1, dst[ci*s.imageSize:][:s.imageSize])
				}
			})
		}
		if bias == nil {
			return
		}
		for ci := 0; ci < s.imageC; ci++ {
			bv := bias[grp*s.imageC+ci]
			plane := dst[ci*s.imageSize : (ci+1)*s.imageSize]
			for i := range plane {
				plane[i] += bv
			}
		}
	}
	inOrder := func(n, _ int, fn func(lo, hi int)) { fn(0, n) }
	if s.units >= NumThreads() {
		parallelFor(s.units, s.rows*s.gridC*s.gridSize, func(lo, hi int) {
			cols := scratchAs[T](&s)
			for u := lo; u < hi; u++ {
				unit(u, cols, gemm.serial, inOrder)
			}
		})
		return
	}
	cols := scratchAs[T](&s)
	for u := 0; u < s.units; u++ {
		unit(u, cols, gemm.parallel, parallelFor)
	}
}

// convWeightGrad accumulates dW = grad x im2col(image)ᵀ over batch items.
// Tasks are column blocks as in convGrid; each worker sums into its own
// copy of dW, and the copies are added at the end.
func convWeightGrad[T convFloat](g *oprules.ConvGeom, image, grad, dw []T, gemm gemms[T]) {
	s := shapeOf(g)
	clear(dw)
	if s.gridSize == 0 || s.units == 0 {
		return
	}
	var mu sync.Mutex
	gemm.run(s.units*s.nblks, s.gridC*s.rows*s.blk, func(lo, hi int, product gemmFunc[T]) {
		part := make([]T, len(dw))
		cols := scratchAs[T](&s)
		for t := lo; t < hi; t++ {
			u, j0 := t/s.nblks, (t%s.nblks)*s.blk
			j1 := min(j0+s.blk, s.gridSize)
			n, grp := u/g.Groups, u%g.Groups
			src := image[(n*g.ImageC+grp*s.imageC)*s.imageSize:]
			gy := grad[(n*g.GridC+grp*s.gridC)*s.gridSize+j0:]
			b, ldb := unfoldAs(&s, src, j0, j1, cols)
			product(false, true, s.gridC, s.rows, j1-j0, 1, gy, s.gridSize, b, ldb, 1, part[grp*s.gridC*s.rows:], s.rows)
		}
		mu.Lock()
		defer mu.Unlock()
		for i, v := range part {
			dw[i] += v
		}
	})
}
