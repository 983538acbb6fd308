package oprules

import "fmt"

// Convolutions in NCHW (NCL for 1-D) layout with PyTorch semantics; the batch
// dim is optional, as in torch.nn.functional.
//
// A convolution and its transpose relate the same two tensors: a larger
// "image" and the "grid" of window positions over it,
//
//	grid = (image + 2*padding - dilation*(kernel-1) - 1) / stride + 1,
//
// with weights of shape (grid channels, image channels/groups, kH, kW) in
// both directions. conv2d maps image to grid, conv_transpose2d grid to image,
// and the weight gradient pairs an image with a grid gradient. Describing all
// of them by one ConvGeom lets every backend share one set of kernels.

// ConvGeom is a resolved convolution. Backends read it instead of parsing
// attributes themselves, so shape inference and kernels cannot disagree.
type ConvGeom struct {
	Dims    int  // spatial dims of the caller's layout: 1 (NCL) or 2 (NCHW)
	Batched bool // the caller's tensors have a batch dim
	Batch   int
	Groups  int

	ImageC, GridC int    // channels on each side
	Image, Grid   [2]int // spatial sizes (H, W); H is 1 for 1-D ops

	Kernel, Stride, Padding, Dilation [2]int
	OutputPadding                     [2]int // transposed convolutions only
}

// ImageShape is the full shape of the image side in the caller's layout.
func (g ConvGeom) ImageShape() Shape { return g.layout(g.ImageC, g.Image) }

// GridShape is the full shape of the grid side in the caller's layout.
func (g ConvGeom) GridShape() Shape { return g.layout(g.GridC, g.Grid) }

// WeightShape is (grid channels, image channels/groups, kernel...).
func (g ConvGeom) WeightShape() Shape {
	s := Shape{g.GridC, g.ImageC / g.Groups}
	if g.Dims == 2 {
		s = append(s, g.Kernel[0])
	}
	return append(s, g.Kernel[1])
}

func (g ConvGeom) layout(c int, hw [2]int) Shape {
	s := Shape{}
	if g.Batched {
		s = append(s, g.Batch)
	}
	s = append(s, c)
	if g.Dims == 2 {
		s = append(s, hw[0])
	}
	return append(s, hw[1])
}

// gridSize is the number of window positions along one dim, or an error
// when the dilated kernel does not fit in the padded image.
func (g ConvGeom) gridSize(i int) (int, error) {
	padded := g.Image[i] + 2*g.Padding[i]
	span := g.Dilation[i]*(g.Kernel[i]-1) + 1
	if padded < span {
		return 0, fmt.Errorf("padded input size %v is smaller than the dilated kernel size %v",
			g.spatial(g.Image[0]+2*g.Padding[0], g.Image[1]+2*g.Padding[1]),
			g.spatial(g.Dilation[0]*(g.Kernel[0]-1)+1, g.Dilation[1]*(g.Kernel[1]-1)+1))
	}
	return (padded-span)/g.Stride[i] + 1, nil
}

// spatial formats a pair of sizes in the caller's dims (one value for 1-D).
func (g ConvGeom) spatial(h, w int) []int {
	if g.Dims == 1 {
		return []int{w}
	}
	return []int{h, w}
}

// TransposedOutputPadding is the output_padding that makes conv_transpose2d
// of a grid-shaped tensor reproduce the image size exactly (the rows the
// strided windows skip at the end).
func (g ConvGeom) TransposedOutputPadding() []int {
	op := make([]int, 2)
	for i := range op {
		op[i] = g.Image[i] - ((g.Grid[i]-1)*g.Stride[i] - 2*g.Padding[i] + g.Dilation[i]*(g.Kernel[i]-1) + 1)
	}
	return op[2-g.Dims:]
}

// Conv2dGeom resolves conv2d(x, weight) with x (N, C, H, W) or (C, H, W).
func Conv2dGeom(x, w Shape, a Attrs) (ConvGeom, error) { return convGeom(x, w, a, 2, false) }

// Conv1dGeom resolves conv1d(x, weight) with x (N, C, L) or (C, L).
func Conv1dGeom(x, w Shape, a Attrs) (ConvGeom, error) { return convGeom(x, w, a, 1, false) }

// ConvTranspose2dGeom resolves conv_transpose2d(x, weight): x is the grid.
func ConvTranspose2dGeom(x, w Shape, a Attrs) (ConvGeom, error) { return convGeom(x, w, a, 2, true) }

func convGeom(x, w Shape, a Attrs, dims int, transposed bool) (ConvGeom, error) {
	g := ConvGeom{Dims: dims}
	xc, xs, err := g.splitInput(x, "input")
	if err != nil {
		return g, err
	}
	if err := g.readAttrs(a, transposed); err != nil {
		return g, err
	}
	if len(w) != dims+2 {
		return g, fmt.Errorf("weight must have %d dims (%s), got shape %v", dims+2, weightLayout(dims, transposed), w)
	}
	g.Kernel = g.pair(w[2:])
	if g.Kernel[0] < 1 || g.Kernel[1] < 1 {
		return g, fmt.Errorf("weight %v has an empty kernel", w)
	}
	if transposed {
		return g, g.resolveTransposed(x, w, xc, xs)
	}
	if w[0]%g.Groups != 0 {
		return g, fmt.Errorf("out_channels %d (weight %v) is not divisible by groups %d", w[0], w, g.Groups)
	}
	if w[1]*g.Groups != xc {
		return g, fmt.Errorf("input %v has %d channels, weight %v expects %d (in_channels/groups %d x groups %d)",
			x, xc, w, w[1]*g.Groups, w[1], g.Groups)
	}
	g.ImageC, g.GridC, g.Image = xc, w[0], xs
	for i := range g.Grid {
		if g.Grid[i], err = g.gridSize(i); err != nil {
			return g, err
		}
	}
	return g, nil
}

func (g *ConvGeom) resolveTransposed(x, w Shape, xc int, xs [2]int) error {
	if w[0] != xc {
		return fmt.Errorf("input %v has %d channels, weight %v has in_channels %d", x, xc, w, w[0])
	}
	if xc%g.Groups != 0 {
		return fmt.Errorf("in_channels %d (input %v) is not divisible by groups %d", xc, x, g.Groups)
	}
	g.GridC, g.ImageC, g.Grid = xc, w[1]*g.Groups, xs
	for i := range g.Image {
		op := g.OutputPadding[i]
		if op >= g.Stride[i] && op >= g.Dilation[i] {
			return fmt.Errorf("output_padding %v must be smaller than stride %v or dilation %v",
				g.spatial(g.OutputPadding[0], g.OutputPadding[1]), g.spatial(g.Stride[0], g.Stride[1]),
				g.spatial(g.Dilation[0], g.Dilation[1]))
		}
		g.Image[i] = (xs[i]-1)*g.Stride[i] - 2*g.Padding[i] + g.Dilation[i]*(g.Kernel[i]-1) + op + 1
	}
	if g.Image[0] < 1 || g.Image[1] < 1 {
		return fmt.Errorf("output size %v is not positive (input %v, padding %v)",
			g.spatial(g.Image[0], g.Image[1]), x, g.spatial(g.Padding[0], g.Padding[1]))
	}
	return nil
}

func weightLayout(dims int, transposed bool) string {
	k := "kH, kW"
	if dims == 1 {
		k = "kL"
	}
	if transposed {
		return "in_channels, out_channels/groups, " + k
	}
	return "out_channels, in_channels/groups, " + k
}

// splitInput checks the rank of an activation with an optional batch dim and
// returns its channels and spatial size, filling Batched and Batch.
func (g *ConvGeom) splitInput(x Shape, what string) (int, [2]int, error) {
	switch len(x) {
	case g.Dims + 1:
		g.Batched, g.Batch = false, 1
	case g.Dims + 2:
		g.Batched, g.Batch = true, x[0]
	default:
		layout := map[int]string{1: "(N, C, L) or (C, L)", 2: "(N, C, H, W) or (C, H, W)"}[g.Dims]
		return 0, [2]int{}, fmt.Errorf("%s must be %s, got shape %v", what, layout, x)
	}
	rest := x[len(x)-g.Dims-1:]
	return rest[0], g.pair(rest[1:]), nil
}

// pair widens the trailing spatial values of a 1-D op to (1, L).
func (g ConvGeom) pair(v []int) [2]int {
	if g.Dims == 1 {
		return [2]int{1, v[0]}
	}
	return [2]int{v[0], v[1]}
}

func (g *ConvGeom) readAttrs(a Attrs, transposed bool) error {
	var err error
	if g.Stride, err = spatialAttr(a, "stride", g.Dims, 1, 1); err != nil {
		return err
	}
	if g.Padding, err = spatialAttr(a, "padding", g.Dims, 0, 0); err != nil {
		return err
	}
	if g.Dilation, err = spatialAttr(a, "dilation", g.Dims, 1, 1); err != nil {
		return err
	}
	if transposed {
		if g.OutputPadding, err = spatialAttr(a, "output_padding", g.Dims, 0, 0); err != nil {
			return err
		}
	}
	if g.Groups = a.Int("groups"); g.Groups < 1 {
		return fmt.Errorf("groups must be positive, got %d", g.Groups)
	}
	return nil
}

// spatialAttr reads an int-list attribute holding one value for every
// spatial dim or one per dim. A 1-D op's height gets identity (the neutral
// value: stride 1, padding 0); smaller values than least are rejected.
func spatialAttr(a Attrs, name string, dims, identity, least int) ([2]int, error) {
	v := a.Ints(name)
	var out [2]int
	switch {
	case len(v) == 1:
		out = [2]int{v[0], v[0]}
	case len(v) == dims && dims == 2:
		out = [2]int{v[0], v[1]}
	default:
		if dims == 1 {
			return out, fmt.Errorf("%s must have 1 value, got %v", name, v)
		}
		return out, fmt.Errorf("%s must have 1 or %d values, got %v", name, dims, v)
	}
	if out[0] < least || out[1] < least {
		return out, fmt.Errorf("%s must be at least %d, got %v", name, least, v)
	}
	if dims == 1 {
		out[0] = identity
	}
	return out, nil
}

// ConvWeightGradGeom resolves _conv2d_weight_grad(image, grid_grad). The grid
// may be smaller than the image allows (the transposed input gradient of an
// output_padding at least the stride); missing positions count as zeros.
func ConvWeightGradGeom(image, grid Shape, a Attrs) (ConvGeom, error) {
	g := ConvGeom{Dims: 2}
	ic, is, err := g.splitInput(image, "input")
	if err != nil {
		return g, err
	}
	gb, gbatch := g.Batched, g.Batch
	gc, gs, err := g.splitInput(grid, "grad")
	if err != nil {
		return g, err
	}
	if gb != g.Batched || gbatch != g.Batch {
		return g, fmt.Errorf("input %v and grad %v differ in batch", image, grid)
	}
	if err := g.readAttrs(a, false); err != nil {
		return g, err
	}
	if g.Kernel, err = spatialAttr(a, "kernel_size", 2, 1, 1); err != nil {
		return g, err
	}
	if ic%g.Groups != 0 || gc%g.Groups != 0 {
		return g, fmt.Errorf("channels of input %v and grad %v must be divisible by groups %d", image, grid, g.Groups)
	}
	g.ImageC, g.GridC, g.Image, g.Grid = ic, gc, is, gs
	for i := range g.Grid {
		most, err := g.gridSize(i)
		if err != nil {
			return g, err
		}
		if gs[i] > most {
			return g, fmt.Errorf("grad %v has more window positions than input %v allows (%d along dim %d)", grid, image, most, i)
		}
	}
	return g, nil
}

// ConvTransposeInputGradGeom resolves _conv_transpose2d_input_grad(grad,
// weight): grad has conv_transpose2d's output shape, the result its input's.
func ConvTransposeInputGradGeom(grad, w Shape, a Attrs) (ConvGeom, error) {
	g := ConvGeom{Dims: 2}
	gc, gs, err := g.splitInput(grad, "grad")
	if err != nil {
		return g, err
	}
	if err := g.readAttrs(a, true); err != nil {
		return g, err
	}
	if len(w) != 4 || w[2] < 1 || w[3] < 1 {
		return g, fmt.Errorf("weight must be (in_channels, out_channels/groups, kH, kW) with a non-empty kernel, got %v", w)
	}
	g.Kernel = [2]int{w[2], w[3]}
	if w[1]*g.Groups != gc || w[0]%g.Groups != 0 {
		return g, fmt.Errorf("grad %v has %d channels, weight %v with groups %d expects %d", grad, gc, w, g.Groups, w[1]*g.Groups)
	}
	g.ImageC, g.GridC, g.Image = gc, w[0], gs
	for i := range g.Grid {
		span := gs[i] - 1 + 2*g.Padding[i] - g.Dilation[i]*(g.Kernel[i]-1) - g.OutputPadding[i]
		if span < 0 || span%g.Stride[i] != 0 {
			return g, fmt.Errorf("grad %v is not an output size of conv_transpose2d with weight %v and these attributes", grad, w)
		}
		g.Grid[i] = span/g.Stride[i] + 1
	}
	return g, nil
}
