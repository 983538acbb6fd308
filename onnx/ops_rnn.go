package onnx

import (
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// The recurrent layers RNN, GRU and LSTM, unrolled over the sequence into
// matmuls and pointwise ops, so they run on every backend and stay
// differentiable. The input projection of every step is one matmul over
// the whole sequence; each step then adds its recurrent projection.
// Equations, gate orders and defaults follow the ONNX operator spec (and
// ONNX Runtime where the spec is silent: clip bounds the activations'
// inputs after bias and peepholes, input_forget makes f = 1 - i,
// sequence_lens freezes a batch entry's state past its length and zeroes
// its Y there).

func init() {
	common := []string{"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"}
	def(common, func(c *ctx) ([]*core.Tensor, error) { return recurrent(c, rnnKind) }, "RNN")
	def(slices.Concat(common, []string{"linear_before_reset"}), func(c *ctx) ([]*core.Tensor, error) { return recurrent(c, gruKind) }, "GRU")
	def(slices.Concat(common, []string{"input_forget"}), func(c *ctx) ([]*core.Tensor, error) { return recurrent(c, lstmKind) }, "LSTM")
}

// cellKind is what distinguishes the three layers: gate count and the
// activation functions each direction takes by default.
type cellKind struct {
	gates       int
	activations []string
}

var (
	rnnKind  = cellKind{gates: 1, activations: []string{"Tanh"}}
	gruKind  = cellKind{gates: 3, activations: []string{"Sigmoid", "Tanh"}}
	lstmKind = cellKind{gates: 4, activations: []string{"Sigmoid", "Tanh", "Tanh"}}
)

// rnnAct is one activation of the activations attribute with its alpha
// and beta.
type rnnAct struct {
	name        string
	alpha, beta float64
}

// rnnActDefaults are the activation functions a recurrent layer may name,
// with how many of activation_alpha and activation_beta each consumes and
// the defaults of the ONNX operators of the same name.
var rnnActDefaults = map[string]struct {
	usesAlpha, usesBeta bool
	alpha, beta         float64
}{
	"Relu": {}, "Tanh": {}, "Sigmoid": {}, "Softsign": {}, "Softplus": {},
	"Affine":          {true, true, 1, 0},
	"LeakyRelu":       {true, false, 0.01, 0},
	"ThresholdedRelu": {true, false, 1, 0},
	"ScaledTanh":      {true, true, 1, 1},
	"HardSigmoid":     {true, true, 0.2, 0.5},
	"Elu":             {true, false, 1, 0},
}

// canonicalAct matches an activation name case-insensitively, as ONNX
// Runtime does ("sigmoid" and "Sigmoid" both appear in exported models).
func canonicalAct(name string) (string, bool) {
	for k := range rnnActDefaults {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

func (a rnnAct) apply(x *core.Tensor) *core.Tensor {
	switch a.name {
	case "Relu":
		return call("relu", nil, x)
	case "Tanh":
		return call("tanh", nil, x)
	case "Sigmoid":
		return call("sigmoid", nil, x)
	case "Softsign":
		return softsign(x)
	case "Softplus":
		return call("softplus", nil, x)
	case "Affine":
		return call("add", nil, call("mul", nil, x, like(x, a.alpha)), like(x, a.beta))
	case "LeakyRelu":
		return call("leaky_relu", core.Attrs{"negative_slope": a.alpha}, x)
	case "ThresholdedRelu":
		return call("where", nil, call("gt", nil, x, like(x, a.alpha)), x, like(x, 0))
	case "ScaledTanh":
		return call("mul", nil, call("tanh", nil, call("mul", nil, x, like(x, a.beta))), like(x, a.alpha))
	case "HardSigmoid":
		return hardSig(x, a.alpha, a.beta)
	default: // Elu
		return call("elu", core.Attrs{"alpha": a.alpha}, x)
	}
}

// rnnActivations reads activations, activation_alpha and activation_beta:
// per direction the kind's count of functions (the defaults when the
// attribute is absent), alphas and betas consumed in order by the
// functions that take them, the operator's default where the list runs
// out.
func rnnActivations(c *ctx, k cellKind, dirs int) [][]rnnAct {
	names := make([]string, 0, dirs*len(k.activations))
	if a := c.attr("activations", pb.AttributeProto_STRINGS); a != nil {
		for _, s := range a.GetStrings() {
			names = append(names, string(s))
		}
		if len(names) != dirs*len(k.activations) {
			c.fail("activations %v: want %d names (%d per direction)", names, dirs*len(k.activations), len(k.activations))
			return nil
		}
	} else {
		for range dirs {
			names = append(names, k.activations...)
		}
	}
	var alphas, betas []float32
	if a := c.attr("activation_alpha", pb.AttributeProto_FLOATS); a != nil {
		alphas = a.GetFloats()
	}
	if a := c.attr("activation_beta", pb.AttributeProto_FLOATS); a != nil {
		betas = a.GetFloats()
	}
	acts := make([][]rnnAct, dirs)
	for i, n := range names {
		name, ok := canonicalAct(n)
		if !ok {
			c.fail("activation %q is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus", n)
			return nil
		}
		d := rnnActDefaults[name]
		act := rnnAct{name: name, alpha: d.alpha, beta: d.beta}
		if d.usesAlpha && len(alphas) > 0 {
			act.alpha, alphas = float64(alphas[0]), alphas[1:]
		}
		if d.usesBeta && len(betas) > 0 {
			act.beta, betas = float64(betas[0]), betas[1:]
		}
		dir := i / len(k.activations)
		acts[dir] = append(acts[dir], act)
	}
	return acts
}

// rnnSetup is a recurrent node's inputs, checked and brought to layout 0
// with the direction axis split off.
type rnnSetup struct {
	kind       cellKind
	x          *core.Tensor // [T, B, I]
	steps, hid int
	batch      int
	w, r       []*core.Tensor // per direction, transposed: [I, G*H] and [H, G*H]
	wb, rb     []*core.Tensor // per direction [G*H], nil without B
	h0, c0     []*core.Tensor // per direction [B, H], nil for zeros
	p          []*core.Tensor // per direction [3*H] (LSTM), nil without P
	valid      []*core.Tensor // per step a [B, 1] bool mask, nil when every length is T
	acts       [][]rnnAct
	clip       float64 // 0: none
	lbr        bool    // GRU's linear_before_reset
	forget     bool    // LSTM's input_forget
}

// direction reads the direction attribute: the number of directions and
// whether each runs backwards in time.
func rnnDirections(c *ctx) []bool {
	switch d := c.attrString("direction", "forward"); d {
	case "forward":
		return []bool{false}
	case "reverse":
		return []bool{true}
	case "bidirectional":
		return []bool{false, true}
	default:
		c.fail("direction %q is not one of forward, reverse, bidirectional", d)
		return nil
	}
}

// perDirection splits t's axis 0 (the direction) into one tensor per
// direction, each reshaped to shape.
func perDirection(t *core.Tensor, dirs int, shape []int) []*core.Tensor {
	out := make([]*core.Tensor, dirs)
	for d := range dirs {
		out[d] = call("slice", core.Attrs{"axis": 0, "start": d, "stop": d + 1}, t).Reshape(shape)
	}
	return out
}

func newRNNSetup(c *ctx, k cellKind) *rnnSetup {
	s := &rnnSetup{kind: k}
	x, w, r := c.in(0), c.in(1), c.in(2)
	if c.err != nil {
		return nil
	}
	dirs := len(rnnDirections(c))
	layout := c.attrInt("layout", 0)
	if layout != 0 && layout != 1 {
		c.fail("layout %d is not 0 or 1", layout)
	}
	if c.err != nil {
		return nil
	}
	if x.Rank() != 3 || w.Rank() != 3 || r.Rank() != 3 {
		c.fail("X %v, W %v and R %v must each have rank 3", x.Shape(), w.Shape(), r.Shape())
		return nil
	}
	if !x.DType().IsFloat() {
		c.fail("X has dtype %s, want a floating-point type", x.DType())
		return nil
	}
	if layout == 1 {
		x = call("transpose", core.Attrs{"dim0": 0, "dim1": 1}, x)
	}
	xs := x.Shape()
	s.steps, s.batch = xs[0], xs[1]
	g := k.gates
	H := r.Shape()[2]
	if hs := c.attrInt("hidden_size", int64(H)); hs != int64(H) || H <= 0 {
		c.fail("hidden_size %d does not match R's shape %v (want [%d, %d, hidden_size])", hs, r.Shape(), dirs, g)
		return nil
	}
	s.hid = H
	if !slices.Equal(w.Shape(), core.Shape{dirs, g * H, xs[2]}) {
		c.fail("W has shape %v, want [%d, %d, %d] (directions, %d gates x hidden_size, input_size)", w.Shape(), dirs, g*H, xs[2], g)
	}
	if !slices.Equal(r.Shape(), core.Shape{dirs, g * H, H}) {
		c.fail("R has shape %v, want [%d, %d, %d]", r.Shape(), dirs, g*H, H)
	}
	if s.steps == 0 {
		c.fail("X has shape %v: a sequence of length 0 is not supported", c.in(0).Shape())
	}
	if c.err != nil {
		return nil
	}
	for _, m := range perDirection(w, dirs, []int{g * H, xs[2]}) {
		s.w = append(s.w, call("transpose", nil, m))
	}
	for _, m := range perDirection(r, dirs, []int{g * H, H}) {
		s.r = append(s.r, call("transpose", nil, m))
	}
	if b := c.opt(3); b != nil {
		if !slices.Equal(b.Shape(), core.Shape{dirs, 2 * g * H}) {
			c.fail("B has shape %v, want [%d, %d]", b.Shape(), dirs, 2*g*H)
			return nil
		}
		for _, v := range perDirection(b, dirs, []int{2 * g * H}) {
			s.wb = append(s.wb, call("slice", core.Attrs{"start": 0, "stop": g * H}, v))
			s.rb = append(s.rb, call("slice", core.Attrs{"start": g * H, "stop": 2 * g * H}, v))
		}
	}
	s.valid = sequenceMasks(c, s.steps, s.batch, x.Device())
	state := func(i int, what string) []*core.Tensor {
		t := c.opt(i)
		if t == nil {
			return nil
		}
		if layout == 1 {
			t = call("transpose", core.Attrs{"dim0": 0, "dim1": 1}, t)
		}
		if !slices.Equal(t.Shape(), core.Shape{dirs, s.batch, H}) {
			c.fail("%s has shape %v in layout 0 form, want [%d, %d, %d] (directions, batch, hidden_size)", what, t.Shape(), dirs, s.batch, H)
			return nil
		}
		return perDirection(t, dirs, []int{s.batch, H})
	}
	s.h0 = state(5, "initial_h")
	if k.gates == 4 {
		s.c0 = state(6, "initial_c")
		if p := c.opt(7); p != nil {
			if !slices.Equal(p.Shape(), core.Shape{dirs, 3 * H}) {
				c.fail("P has shape %v, want [%d, %d]", p.Shape(), dirs, 3*H)
				return nil
			}
			s.p = perDirection(p, dirs, []int{3 * H})
		}
		s.forget = c.attrInt("input_forget", 0) != 0
	}
	if k.gates == 3 {
		s.lbr = c.attrInt("linear_before_reset", 0) != 0
	}
	if c.has("clip") {
		if s.clip = c.attrFloat("clip", 0); !(s.clip > 0) {
			c.fail("clip %v is not a positive threshold", s.clip)
		}
	}
	s.acts = rnnActivations(c, k, dirs)
	s.x = x
	return s
}

// sequenceMasks reads sequence_lens (input 4) on the host, checks each
// length lies in [0, steps], and returns per step the [B, 1] mask of the
// batch entries still inside their sequence; nil when there is no input
// or every length is the full sequence (nothing to mask).
func sequenceMasks(c *ctx, steps, batch int, dev core.Device) []*core.Tensor {
	lens, ok := c.ints(4)
	if !ok {
		return nil
	}
	if len(lens) != batch {
		c.fail("sequence_lens has %d values for a batch of %d", len(lens), batch)
		return nil
	}
	full := true
	for i, l := range lens {
		if l < 0 || l > int64(steps) {
			c.fail("sequence_lens[%d] is %d, outside [0, %d] (the sequence length)", i, l, steps)
			return nil
		}
		full = full && l == int64(steps)
	}
	if full {
		return nil
	}
	masks := make([]*core.Tensor, steps)
	for t := range steps {
		m := make([]bool, batch)
		for b, l := range lens {
			m[b] = int64(t) < l
		}
		masks[t] = core.FromSlice(m, core.Shape{batch, 1}, dev)
	}
	return masks
}

func recurrent(c *ctx, k cellKind) ([]*core.Tensor, error) {
	s := newRNNSetup(c, k)
	if c.err != nil || s == nil {
		return nil, nil
	}
	reverse := rnnDirections(c)
	var ys, hs, cs []*core.Tensor
	for d, back := range reverse {
		y, h, cell := s.run(d, back)
		ys, hs, cs = append(ys, y), append(hs, h), append(cs, cell)
	}
	Y := call("stack", core.Attrs{"axis": 1}, ys...)  // [T, dirs, B, H]
	Yh := call("stack", core.Attrs{"axis": 0}, hs...) // [dirs, B, H]
	var Yc *core.Tensor
	if k.gates == 4 {
		Yc = call("stack", core.Attrs{"axis": 0}, cs...)
	}
	if c.attrInt("layout", 0) == 1 {
		Y = call("permute", core.Attrs{"dims": []int{2, 0, 1, 3}}, Y)
		Yh = call("transpose", core.Attrs{"dim0": 0, "dim1": 1}, Yh)
		if Yc != nil {
			Yc = call("transpose", core.Attrs{"dim0": 0, "dim1": 1}, Yc)
		}
	}
	outs := []*core.Tensor{Y, Yh}
	if Yc != nil {
		outs = append(outs, Yc)
	}
	for _, o := range outs {
		if err := o.Err(); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// gate is columns [i*H, (i+1)*H) of a [B, G*H] pre-activation.
func (s *rnnSetup) gate(t *core.Tensor, i int) *core.Tensor {
	return call("slice", core.Attrs{"axis": 1, "start": i * s.hid, "stop": (i + 1) * s.hid}, t)
}

// clipped bounds a pre-activation by clip when the node sets one.
func (s *rnnSetup) clipped(t *core.Tensor) *core.Tensor {
	if s.clip == 0 {
		return t
	}
	return call("clamp", core.Attrs{"min": -s.clip, "max": s.clip}, t)
}

// run unrolls direction d over the sequence, backwards when back is set:
// Y [T, B, H] in time order, the final hidden state and (LSTM) cell state.
func (s *rnnSetup) run(d int, back bool) (y, h, cell *core.Tensor) {
	x := s.x
	zeros := core.FromFloat64s(x.DType(), core.Shape{s.batch, s.hid}, make([]float64, s.batch*s.hid), x.Device())
	// The input projection of every step at once: [T, B, G*H], with W's
	// bias and, where it is not needed apart, R's.
	xw := call("matmul", nil, x, s.w[d])
	var rbH *core.Tensor // GRU's Rbh, kept apart from the h gate's input
	if s.wb != nil {
		xw = call("add", nil, xw, s.wb[d])
		rb := s.rb[d]
		if s.kind.gates == 3 {
			rbH = s.gate(rb.Reshape([]int{1, 3 * s.hid}), 2)
			rb = call("concat", core.Attrs{"axis": 0}, call("slice", core.Attrs{"start": 0, "stop": 2 * s.hid}, rb),
				core.FromFloat64s(rb.DType(), core.Shape{s.hid}, make([]float64, s.hid), rb.Device()))
		}
		xw = call("add", nil, xw, rb)
	}
	h, cell = zeros, zeros
	if s.h0 != nil {
		h = s.h0[d]
	}
	if s.c0 != nil {
		cell = s.c0[d]
	}
	var pi, po, pf *core.Tensor
	if s.p != nil {
		p := s.p[d].Reshape([]int{1, 3 * s.hid})
		pi, po, pf = s.gate(p, 0), s.gate(p, 1), s.gate(p, 2)
	}
	acts := s.acts[d]
	outs := make([]*core.Tensor, s.steps)
	for i := range s.steps {
		t := i
		if back {
			t = s.steps - 1 - i
		}
		xt := call("slice", core.Attrs{"axis": 0, "start": t, "stop": t + 1}, xw).Reshape([]int{s.batch, s.kind.gates * s.hid})
		var hNew, cNew *core.Tensor
		switch s.kind.gates {
		case 1:
			hNew = acts[0].apply(s.clipped(call("add", nil, xt, call("matmul", nil, h, s.r[d]))))
		case 3:
			hNew = s.gruStep(d, xt, h, rbH, acts)
		default:
			hNew, cNew = s.lstmStep(d, xt, h, cell, [3]*core.Tensor{pi, po, pf}, acts)
		}
		out := hNew
		if s.valid != nil {
			m := s.valid[t]
			hNew = call("where", nil, m, hNew, h)
			out = call("where", nil, m, out, zeros)
			if cNew != nil {
				cNew = call("where", nil, m, cNew, cell)
			}
		}
		h, cell = hNew, cNew
		outs[t] = out
	}
	return call("stack", core.Attrs{"axis": 0}, outs...), h, cell
}

// gruStep is one GRU step: z and r from the summed projections, then the
// candidate with the reset applied before R's projection
// (linear_before_reset 0) or after it, with Rbh, (1).
func (s *rnnSetup) gruStep(d int, xt, h, rbH *core.Tensor, acts []rnnAct) *core.Tensor {
	H := s.hid
	rZR := call("slice", core.Attrs{"axis": 1, "start": 0, "stop": 2 * H}, s.r[d])
	rH := call("slice", core.Attrs{"axis": 1, "start": 2 * H, "stop": 3 * H}, s.r[d])
	zr := call("add", nil, call("slice", core.Attrs{"axis": 1, "start": 0, "stop": 2 * H}, xt), call("matmul", nil, h, rZR))
	z := acts[0].apply(s.clipped(s.gate(zr, 0)))
	r := acts[0].apply(s.clipped(s.gate(zr, 1)))
	var hh *core.Tensor
	if s.lbr {
		hr := call("matmul", nil, h, rH)
		if rbH != nil {
			hr = call("add", nil, hr, rbH)
		}
		hh = call("mul", nil, r, hr)
	} else {
		hh = call("matmul", nil, call("mul", nil, r, h), rH)
		if rbH != nil {
			hh = call("add", nil, hh, rbH)
		}
	}
	cand := acts[1].apply(s.clipped(call("add", nil, s.gate(xt, 2), hh)))
	// (1 - z) * cand + z * h, written as cand + z * (h - cand).
	return call("add", nil, cand, call("mul", nil, z, call("sub", nil, h, cand)))
}

// lstmStep is one LSTM step (gate order i, o, f, c; peepholes i, o, f).
func (s *rnnSetup) lstmStep(d int, xt, h, cell *core.Tensor, p [3]*core.Tensor, acts []rnnAct) (hNew, cNew *core.Tensor) {
	g := call("add", nil, xt, call("matmul", nil, h, s.r[d]))
	i, o, f, cc := s.gate(g, 0), s.gate(g, 1), s.gate(g, 2), s.gate(g, 3)
	if p[0] != nil {
		i = call("add", nil, i, call("mul", nil, p[0], cell))
		f = call("add", nil, f, call("mul", nil, p[2], cell))
	}
	i = acts[0].apply(s.clipped(i))
	if s.forget {
		f = call("sub", nil, like(i, 1), i)
	} else {
		f = acts[0].apply(s.clipped(f))
	}
	cc = acts[1].apply(s.clipped(cc))
	cNew = call("add", nil, call("mul", nil, f, cell), call("mul", nil, i, cc))
	if p[1] != nil {
		o = call("add", nil, o, call("mul", nil, p[1], cNew))
	}
	o = acts[0].apply(s.clipped(o))
	return call("mul", nil, o, acts[2].apply(cNew)), cNew
}
