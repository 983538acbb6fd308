package core

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

// convDTypes requires one floating dtype for x, weight and bias, as PyTorch does.
func convDTypes(in []Meta) error {
	for i, name := range []string{"weight", "bias"} {
		if i+1 >= len(in) {
			break
		}
		if m := in[i+1]; m.DType != Invalid && m.DType != in[0].DType {
			return fmt.Errorf("input is %s but %s is %s; cast one of them", in[0].DType, name, m.DType)
		}
	}
	return nil
}

func checkBias(in []Meta, channels int) error {
	if len(in) < 3 || in[2].DType == Invalid {
		return nil
	}
	if b := in[2].Shape; len(b) != 1 || b[0] != channels {
		return fmt.Errorf("bias must have shape [%d] (one value per output channel), got %v", channels, b)
	}
	return nil
}

// inferConv builds an Infer for an op whose result is one side of geom.
func inferConv(geom func(x, w Shape, a Attrs) (ConvGeom, error), gridOut bool) func([]Meta, Attrs) ([]Meta, error) {
	return func(in []Meta, a Attrs) ([]Meta, error) {
		if err := convDTypes(in); err != nil {
			return nil, err
		}
		g, err := geom(in[0].Shape, in[1].Shape, a)
		if err != nil {
			return nil, err
		}
		out := g.ImageShape()
		if gridOut {
			out = g.GridShape()
		}
		if err := checkBias(in, out[len(out)-g.Dims-1]); err != nil {
			return nil, err
		}
		return []Meta{{Shape: out, DType: in[0].DType}}, nil
	}
}

// convAttrSpecs are the attributes of conv ops, in PyTorch's argument order.
func convAttrSpecs(transposed bool) []AttrSpec {
	specs := []AttrSpec{
		{Name: "stride", Kind: AttrInts, Default: []int{1}, Doc: "step between windows: one value for every spatial dim or one per dim"},
		{Name: "padding", Kind: AttrInts, Default: []int{0}, Doc: "implicit zeros on both sides of every spatial dim"},
	}
	if transposed {
		specs = append(specs, AttrSpec{Name: "output_padding", Kind: AttrInts, Default: []int{0},
			Doc: "extra size added to one side of every spatial dim of the output"})
	}
	if !transposed {
		specs = append(specs, AttrSpec{Name: "dilation", Kind: AttrInts, Default: []int{1}, Doc: "spacing between kernel elements"})
	}
	specs = append(specs, AttrSpec{Name: "groups", Kind: AttrInt, Default: 1, Doc: "channel groups convolved independently"})
	if transposed {
		specs = append(specs, AttrSpec{Name: "dilation", Kind: AttrInts, Default: []int{1}, Doc: "spacing between kernel elements"})
	}
	return specs
}

// geomAttrs turns a resolved geometry back into 2-D attributes for the ops
// a backward rule calls.
func geomAttrs(g ConvGeom) Attrs {
	return Attrs{"stride": g.Stride[:], "padding": g.Padding[:], "dilation": g.Dilation[:], "groups": g.Groups}
}

// convInputs are x, weight and the optional bias, all floating point.
func convInputs() []InputSpec {
	return []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly},
		{Name: "bias", DTypes: floatsOnly, Optional: true}}
}

// biasGrad sums a result gradient over every dim but the channels.
func biasGrad(gy *Tensor, g ConvGeom) *Tensor {
	axes := []int{}
	for i := 0; i < gy.Rank(); i++ {
		if i != gy.Rank()-g.Dims-1 {
			axes = append(axes, i)
		}
	}
	return call1("sum", Attrs{"axes": axes}, gy)
}

func needBias(c *GradCtx) bool { return len(c.Inputs) > 2 && c.Inputs[2] != nil && c.Need[2] }

// conv2dBackward: the input gradient is the transposed convolution of the
// result gradient with the same weight; output_padding restores the rows the
// strided windows never reached.
func conv2dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := Conv2dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	res := make([]*Tensor, 3)
	if c.Need[0] {
		a := geomAttrs(g)
		a["output_padding"] = g.TransposedOutputPadding()
		res[0] = call1("conv_transpose2d", a, gy, w)
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, x, gy)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

// conv1dBackward runs the 2-D rules on a unit height.
func conv1dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := Conv1dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	tall := func(t *Tensor) *Tensor { return call1("unsqueeze", Attrs{"axis": -2}, t) }
	res := make([]*Tensor, 3)
	if c.Need[0] {
		a := geomAttrs(g)
		a["output_padding"] = []int{0, g.TransposedOutputPadding()[0]}
		res[0] = call1("conv_transpose2d", a, tall(gy), tall(w)).Reshape(x.shape)
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, tall(x), tall(gy)).Reshape(w.shape)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

// convTranspose2dBackward: the input gradient is conv2d of the result
// gradient; when output_padding reaches the stride, conv2d would see extra
// window positions, so the internal op that stops at the input size runs.
func convTranspose2dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := ConvTranspose2dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	res := make([]*Tensor, 3)
	if c.Need[0] {
		if g.OutputPadding[0] < g.Stride[0] && g.OutputPadding[1] < g.Stride[1] {
			res[0] = call1("conv2d", geomAttrs(g), gy, w)
		} else {
			res[0] = call1("_conv_transpose2d_input_grad", c.Attrs, gy, w)
		}
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, gy, x)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

func init() {
	MustRegister(
		&OpDef{
			Name: "conv2d", Category: "conv", Doc: "2-D convolution (cross-correlation) over NCHW input, as torch.nn.functional.conv2d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(false),
			Infer: inferConv(Conv2dGeom, true), Backward: conv2dBackward, Samples: conv2dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "conv1d", Category: "conv", Doc: "1-D convolution (cross-correlation) over NCL input, as torch.nn.functional.conv1d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(false),
			Infer: inferConv(Conv1dGeom, true), Backward: conv1dBackward, Samples: conv1dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "conv_transpose2d", Category: "conv", Doc: "2-D transposed convolution over NCHW input, as torch.nn.functional.conv_transpose2d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(true),
			Infer: inferConv(ConvTranspose2dGeom, false), Backward: convTranspose2dBackward, Samples: convTranspose2dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "_conv2d_weight_grad", Category: "conv", Internal: true,
			Doc:    "Gradient of conv2d with respect to its weight, from the input and the result gradient.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "grad", DTypes: floatsOnly}}, Outputs: []string{"grad_weight"},
			Attrs: append(convAttrSpecs(false), AttrSpec{Name: "kernel_size", Kind: AttrInts, Required: true, Doc: "spatial size of the weight"}),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if in[0].DType != in[1].DType {
					return nil, fmt.Errorf("input is %s but grad is %s", in[0].DType, in[1].DType)
				}
				g, err := ConvWeightGradGeom(in[0].Shape, in[1].Shape, a)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: g.WeightShape(), DType: in[0].DType}}, nil
			},
			Samples: convWeightGradSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "_conv_transpose2d_input_grad", Category: "conv", Internal: true,
			Doc:    "Gradient of conv_transpose2d with respect to its input when output_padding reaches the stride.",
			Inputs: []InputSpec{{Name: "grad", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly}}, Outputs: []string{"grad_input"},
			Attrs: convAttrSpecs(true),
			Infer: inferConv(ConvTransposeInputGradGeom, true), Samples: convTransposeInputGradSamples(), TolScale: 2,
		},
	)
}

var noBias = Gen{Absent: true}

func conv2dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 2, 5, 5), G(F32, 3, 2, 3, 3), G(F32, 3)}},
		{Name: "stride_padding", Inputs: []Gen{G(F32, 1, 2, 6, 5), G(F32, 3, 2, 3, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "dilation_asymmetric", Inputs: []Gen{G(F32, 1, 2, 7, 6), G(F32, 2, 2, 2, 3), G(F32, 2)},
			Attrs: Attrs{"stride": []int{1, 2}, "padding": []int{1, 2}, "dilation": []int{2, 1}}},
		{Name: "groups", Inputs: []Gen{G(F32, 1, 4, 4, 4), G(F32, 6, 2, 3, 3), G(F32, 6)}, Attrs: Attrs{"groups": 2, "padding": []int{1}}},
		{Name: "unbatched_1x1", Inputs: []Gen{G(F32, 3, 4, 4), G(F32, 5, 3, 1, 1), G(F32, 5)}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 3, 4, 4).AsStrided(), G(F32, 2, 3, 2, 2).AsStrided(), G(F32, 2)},
			Attrs: Attrs{"stride": []int{2, 1}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 5, 4), G(F64, 2, 2, 3, 3), G(F64, 2)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "f16", Inputs: []Gen{G(F16, 1, 2, 4, 4), G(F16, 2, 2, 3, 3), G(F16, 2)}},
	}
}

func conv1dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 3, 8), G(F32, 4, 3, 3), G(F32, 4)}},
		{Name: "stride_padding_dilation", Inputs: []Gen{G(F32, 1, 2, 11), G(F32, 3, 2, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{2}, "dilation": []int{2}}},
		{Name: "groups", Inputs: []Gen{G(F32, 2, 4, 6), G(F32, 4, 2, 2), G(F32, 4)}, Attrs: Attrs{"groups": 2}},
		{Name: "unbatched", Inputs: []Gen{G(F32, 3, 7), G(F32, 2, 3, 3), G(F32, 2)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "strided", Inputs: []Gen{G(F32, 2, 3, 6).AsStrided(), G(F32, 2, 3, 2), G(F32, 2)}, Attrs: Attrs{"stride": []int{3}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 9), G(F64, 3, 2, 4), G(F64, 3)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "bf16", Inputs: []Gen{G(BF16, 1, 2, 8), G(BF16, 2, 2, 3), G(BF16, 2)}},
	}
}

func convTranspose2dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 3, 3), G(F32, 2, 3, 3, 3), G(F32, 3)}},
		{Name: "stride_padding_output_padding", Inputs: []Gen{G(F32, 2, 2, 3, 3), G(F32, 2, 2, 3, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}, "output_padding": []int{1}}},
		{Name: "groups_dilation", Inputs: []Gen{G(F32, 1, 4, 3, 3), G(F32, 4, 1, 2, 2), G(F32, 2)},
			Attrs: Attrs{"groups": 2, "dilation": []int{2}}},
		{Name: "output_padding_below_dilation", Inputs: []Gen{G(F32, 1, 1, 3, 4), G(F32, 1, 2, 3, 3), G(F32, 2)},
			Attrs: Attrs{"dilation": []int{2}, "output_padding": []int{1}}},
		{Name: "asymmetric", Inputs: []Gen{G(F32, 1, 2, 3, 4), G(F32, 2, 2, 2, 3), G(F32, 2)},
			Attrs: Attrs{"stride": []int{2, 1}, "padding": []int{0, 1}, "output_padding": []int{1, 0}}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 2, 3, 3).AsStrided(), G(F32, 2, 2, 2, 2).AsStrided(), G(F32, 2)}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 3, 3), G(F64, 2, 2, 3, 3), G(F64, 2)},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "unbatched_f16", Inputs: []Gen{G(F16, 2, 3, 3), G(F16, 2, 2, 2, 2), noBias}, Attrs: Attrs{"stride": []int{2}}},
	}
}

func convWeightGradSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 2, 5, 5), G(F32, 2, 3, 3, 3)}, Attrs: Attrs{"kernel_size": []int{3}}},
		{Name: "stride_padding_groups", Inputs: []Gen{G(F32, 1, 4, 6, 6), G(F32, 1, 4, 4, 4)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{2}, "padding": []int{1}, "groups": 2}},
		{Name: "short_grid", Inputs: []Gen{G(F32, 1, 2, 8, 9), G(F32, 1, 1, 3, 4)},
			Attrs: Attrs{"kernel_size": []int{3}, "dilation": []int{2}}},
		{Name: "unbatched", Inputs: []Gen{G(F32, 2, 4, 4), G(F32, 3, 3, 3)}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 4, 4), G(F64, 1, 2, 2, 2)}, Attrs: Attrs{"kernel_size": []int{3}}},
	}
}

func convTransposeInputGradSamples() []Sample {
	return []Sample{
		{Name: "dilation_output_padding", Inputs: []Gen{G(F32, 1, 2, 8, 9), G(F32, 1, 2, 3, 3)},
			Attrs: Attrs{"dilation": []int{2}, "output_padding": []int{1}}},
		{Name: "stride_padding", Inputs: []Gen{G(F32, 1, 2, 7, 7), G(F32, 2, 2, 3, 3)},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "groups", Inputs: []Gen{G(F32, 1, 2, 5, 5), G(F32, 4, 1, 2, 2)}, Attrs: Attrs{"groups": 2}},
		{Name: "unbatched_f64", Inputs: []Gen{G(F64, 2, 10, 10), G(F64, 1, 2, 2, 2)},
			Attrs: Attrs{"stride": []int{2}, "dilation": []int{3}, "output_padding": []int{2}}},
	}
}
