package onnx

import (
	"cmp"
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Object detection's post-processing: NonMaxSuppression and RoiAlign.
// Both decide on the host what depends on the boxes' values:
// NonMaxSuppression's output has as many rows as boxes survive, and
// RoiAlign samples each region on a grid whose size follows from the
// region's size (sampling_ratio 0). RoiAlign's interpolation itself is
// registry ops: a gather of the feature map at the sample points, times
// their bilinear weights, reduced per bin.

func init() {
	def([]string{"center_point_box"}, nonMaxSuppression, "NonMaxSuppression")
	def([]string{"coordinate_transformation_mode", "mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"},
		roiAlign, "RoiAlign")
}

// hostFloats reads input i on the host; nil when absent.
func hostFloats(c *ctx, i int) []float64 {
	t := c.opt(i)
	if t == nil {
		return nil
	}
	v, err := t.Float64s()
	if err != nil {
		c.fail("input %d: %v", i, err)
	}
	return v
}

// box is a detection's corners, in f32 as ONNX's reference computes IoU
// (a threshold test on the boundary depends on it).
type box struct{ x0, y0, x1, y1 float32 }

func boxAt(v []float64, i int, centre bool) box {
	a, b, c, d := float32(v[4*i]), float32(v[4*i+1]), float32(v[4*i+2]), float32(v[4*i+3])
	if centre { // [x_center, y_center, width, height]
		return box{a - c/2, b - d/2, a + c/2, b + d/2}
	}
	// [y1, x1, y2, x2], either corner first.
	return box{min(b, d), min(a, c), max(b, d), max(a, c)}
}

// overlaps says whether IoU(a, b) exceeds threshold; boxes without area
// overlap nothing.
func overlaps(a, b box, threshold float32) bool {
	ix := min(a.x1, b.x1) - max(a.x0, b.x0)
	iy := min(a.y1, b.y1) - max(a.y0, b.y0)
	if ix <= 0 || iy <= 0 {
		return false
	}
	inter := ix * iy
	areaA, areaB := (a.x1-a.x0)*(a.y1-a.y0), (b.x1-b.x0)*(b.y1-b.y0)
	union := areaA + areaB - inter
	if areaA <= 0 || areaB <= 0 || union <= 0 {
		return false
	}
	return inter/union > threshold
}

// nonMaxSuppression selects greedily, per batch and class, the boxes by
// descending score (the lower index first among equal scores) that
// overlap no box already selected by more than iou_threshold, and that
// score above score_threshold when one is given. The selection runs on
// the host: how many rows the output has depends on the values.
func nonMaxSuppression(c *ctx) ([]*core.Tensor, error) {
	boxes, scores := c.in(0), c.in(1)
	centre := c.attrInt("center_point_box", 0)
	if centre != 0 && centre != 1 {
		c.fail("center_point_box %d is not 0 or 1", centre)
	}
	bs, ss := boxes.Shape(), scores.Shape()
	if c.err == nil && (len(bs) != 3 || bs[2] != 4 || len(ss) != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
		c.fail("boxes have shape %v and scores %v, want [batches, boxes, 4] and [batches, classes, boxes]", bs, ss)
	}
	var limit int64
	if v, ok := c.ints(2); ok && len(v) > 0 {
		limit = max(v[0], 0)
	}
	iou, _ := c.scalar(3)
	threshold, hasThreshold := c.scalar(4)
	if c.err != nil || !onHost(c, "NonMaxSuppression selects its boxes") {
		return nil, nil
	}
	bv, sv := hostFloats(c, 0), hostFloats(c, 1)
	if c.err != nil {
		return nil, nil
	}
	batches, classes, n := bs[0], ss[1], bs[1]
	var selected []int64
	order := make([]int, 0, n)
	for b := range batches {
		for k := range classes {
			score := sv[(b*classes+k)*n : (b*classes+k+1)*n]
			order = order[:0]
			for i := range n {
				if !hasThreshold || float32(score[i]) > float32(threshold) {
					order = append(order, i)
				}
			}
			slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(score[j], score[i]) })
			var kept []box
			for _, i := range order {
				if int64(len(kept)) >= limit {
					break
				}
				bi := boxAt(bv[b*n*4:], i, centre == 1)
				if !slices.ContainsFunc(kept, func(o box) bool { return overlaps(bi, o, float32(iou)) }) {
					kept = append(kept, bi)
					selected = append(selected, int64(b), int64(k), int64(i))
				}
			}
		}
	}
	return one(core.FromSlice(selected, core.Shape{len(selected) / 3, 3}, boxes.Device()))
}

// roiSamples are RoiAlign's bilinear taps: for each region, output bin
// and sample, four positions in the flattened [batch, height, width]
// feature map and their weights; count is each region's samples per bin.
type roiSamples struct {
	pos    []int64
	weight []float64
	count  []float64
	grid   int // samples per bin, the most any region has
}

// roiGeometry is what RoiAlign's attributes say about the sampling.
type roiGeometry struct {
	height, width, outH, outW int
	scale, offset             float64
	ratio                     int
	halfPixel                 bool
}

// roiGrid is the sample grid of one region, rows by columns per bin, and
// the region's start and bin size.
func (g roiGeometry) roiGrid(roi []float64) (rows, cols int, y0, x0, binH, binW float64) {
	x0, y0 = roi[0]*g.scale-g.offset, roi[1]*g.scale-g.offset
	w, h := roi[2]*g.scale-g.offset-x0, roi[3]*g.scale-g.offset-y0
	if !g.halfPixel {
		w, h = max(w, 1), max(h, 1)
	}
	binH, binW = h/float64(g.outH), w/float64(g.outW)
	rows, cols = g.ratio, g.ratio
	if g.ratio <= 0 {
		rows, cols = int(math.Ceil(h/float64(g.outH))), int(math.Ceil(w/float64(g.outW)))
	}
	return max(rows, 0), max(cols, 0), y0, x0, binH, binW
}

// taps are the four bilinear positions (in one batch's H*W plane) and
// weights of the point (y, x), all zero outside [-1, size].
func (g roiGeometry) taps(y, x float64) (pos [4]int64, w [4]float64) {
	if y < -1 || y > float64(g.height) || x < -1 || x > float64(g.width) {
		return pos, w
	}
	y, x = max(y, 0), max(x, 0)
	yl, xl := int(y), int(x)
	yh, xh := yl+1, xl+1
	if yl >= g.height-1 {
		yl, yh, y = g.height-1, g.height-1, float64(g.height-1)
	}
	if xl >= g.width-1 {
		xl, xh, x = g.width-1, g.width-1, float64(g.width-1)
	}
	ly, lx := y-float64(yl), x-float64(xl)
	hy, hx := 1-ly, 1-lx
	pos = [4]int64{int64(yl*g.width + xl), int64(yl*g.width + xh), int64(yh*g.width + xl), int64(yh*g.width + xh)}
	return pos, [4]float64{hy * hx, hy * lx, ly * hx, ly * lx}
}

// samples lays every region's taps out on the widest region's grid; a
// region with fewer samples repeats its bin's first one (which changes
// neither a max nor, with weight zero, an average).
func (g roiGeometry) samples(rois []float64, batch []int64) roiSamples {
	r := len(batch)
	var s roiSamples
	for i := range r {
		rows, cols, _, _, _, _ := g.roiGrid(rois[4*i:])
		s.grid = max(s.grid, rows*cols)
	}
	s.grid = max(s.grid, 1)
	per := g.outH * g.outW * s.grid * 4
	s.pos, s.weight, s.count = make([]int64, r*per), make([]float64, r*per), make([]float64, r)
	for i := range r {
		rows, cols, y0, x0, binH, binW := g.roiGrid(rois[4*i:])
		s.count[i] = float64(max(rows*cols, 1))
		base := batch[i] * int64(g.height*g.width)
		for b := range g.outH * g.outW {
			ph, pw := b/g.outW, b%g.outW
			at := (i*g.outH*g.outW + b) * s.grid * 4
			for k := range s.grid {
				o := at + 4*k
				if k >= rows*cols {
					copy(s.pos[o:o+4], s.pos[at:at+4])
					continue
				}
				iy, ix := k/cols, k%cols
				y := y0 + float64(ph)*binH + (float64(iy)+0.5)*binH/float64(rows)
				x := x0 + float64(pw)*binW + (float64(ix)+0.5)*binW/float64(cols)
				pos, w := g.taps(y, x)
				for t := range 4 {
					s.pos[o+t], s.weight[o+t] = base+pos[t], w[t]
				}
			}
		}
	}
	return s
}

func roiAlign(c *ctx) ([]*core.Tensor, error) {
	x, rois, batch := c.in(0), c.in(1), c.in(2)
	mode := c.attrString("mode", "avg")
	if mode != "avg" && mode != "max" {
		c.fail("mode %q is not avg or max", mode)
	}
	g := roiGeometry{outH: int(c.attrInt("output_height", 1)), outW: int(c.attrInt("output_width", 1)),
		scale: c.attrFloat("spatial_scale", 1), ratio: int(c.attrInt("sampling_ratio", 0))}
	switch ct := c.attrString("coordinate_transformation_mode", "half_pixel"); ct {
	case "half_pixel":
		g.halfPixel, g.offset = true, 0.5
	case "output_half_pixel":
	default:
		c.fail("coordinate_transformation_mode %q is not half_pixel or output_half_pixel", ct)
	}
	if g.outH < 1 || g.outW < 1 {
		c.fail("output_height %d and output_width %d must be positive", g.outH, g.outW)
	}
	xs, rs := x.Shape(), rois.Shape()
	if c.err == nil && (len(xs) != 4 || len(rs) != 2 || rs[1] != 4 || batch.Rank() != 1 || batch.Numel() != rs[0]) {
		c.fail("X has shape %v, rois %v and batch_indices %v, want [N, C, H, W], [R, 4] and [R]", xs, rs, batch.Shape())
	}
	if c.err != nil || !onHost(c, "RoiAlign places its samples") {
		return nil, nil
	}
	rv := hostFloats(c, 1)
	bi, _ := c.ints(2)
	if c.err != nil {
		return nil, nil
	}
	g.height, g.width = xs[2], xs[3]
	for i, b := range bi {
		if b < 0 || b >= int64(xs[0]) {
			c.fail("batch_indices[%d] is %d, outside [0, %d)", i, b, xs[0])
			return nil, nil
		}
	}
	s := g.samples(rv, bi)
	dev, dt := x.Device(), x.DType()
	r, ch := rs[0], xs[1]
	// [N*H*W, C]: one row per position, so a gather takes every channel.
	plane := call("permute", core.Attrs{"dims": []int{0, 2, 3, 1}}, x).Reshape([]int{xs[0] * g.height * g.width, ch})
	picked := call("index_select", core.Attrs{"axis": 0}, plane, core.FromSlice(s.pos, core.Shape{len(s.pos)}, dev))
	weights := core.FromFloat64s(dt, core.Shape{len(s.weight), 1}, s.weight, dev)
	taps := call("mul", nil, picked, weights).Reshape([]int{r, g.outH, g.outW, s.grid, 4, ch})
	var y *core.Tensor
	if mode == "avg" {
		y = call("sum", core.Attrs{"axes": []int{3, 4}}, taps)
		y = call("div", nil, y, core.FromFloat64s(dt, core.Shape{r, 1, 1, 1}, s.count, dev))
	} else {
		y = call("max", core.Attrs{"axes": []int{3, 4}}, taps)
	}
	return one(call("permute", core.Attrs{"dims": []int{0, 3, 1, 2}}, y))
}
