package diffuse

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The models' linear and conv layers are these wrappers of nn's, so that
// adapters can be applied at run time: Forward is the layer's own plus,
// for each applied adapter, scale·up(down(x)), computed from the input as
// PEFT's unmerged LoRA does, with the weights untouched.

type linearLayer struct {
	nn.Linear
	int8   *int8Weight // set when the weight is held as int8 (int8.go)
	deltas []*lowRank
}

func (l *linearLayer) Forward(x *core.Tensor) *core.Tensor {
	y := l.own(x)
	for _, d := range l.deltas {
		y = y.Add(mul(d.up.Forward(d.down.Forward(x)), d.scale))
	}
	return y
}

// forwardAdd is Forward(x).Add(res) (res nil: Forward(x)); without
// adapters or int8 weights the residual is added in the product's store
// where the CPU allows (nn.Linear.ForwardAdd: the same bits).
func (l *linearLayer) forwardAdd(x, res *core.Tensor) *core.Tensor {
	switch {
	case res == nil:
		return l.Forward(x)
	case l.int8 == nil && len(l.deltas) == 0:
		return l.Linear.ForwardAdd(x, res)
	}
	return l.Forward(x).Add(res)
}

type convLayer struct {
	nn.Conv2d
	int8   *int8Weight // set when the weight is held as int8 (int8.go)
	deltas []*lowRank
}

func (c *convLayer) Forward(x *core.Tensor) *core.Tensor {
	y := c.own(x)
	for _, d := range c.deltas {
		y = y.Add(mul(d.up.Forward(d.down.Forward(x)), d.scale))
	}
	return y
}

// lowRank is one applied adapter layer: down and up as the layer kind's
// modules (linears, or a conv with the layer's geometry and a 1×1 conv),
// and the scale on their product.
type lowRank struct {
	down, up interface {
		Forward(*core.Tensor) *core.Tensor
	}
	base  float64 // the layer's alpha/rank
	scale float64 // base × the adapter's scale
}

// Adaptable is a model LoRA adapters apply to: UNet2DModel,
// UNet2DConditionModel, DiTTransformer2DModel and AutoencoderKL.
type Adaptable interface {
	nn.Module
	// loraComponent is the pipeline component a LoRA's layers for this
	// model are filed under.
	loraComponent() string
}

func (m *UNet2DModel) loraComponent() string           { return "unet" }
func (m *UNet2DConditionModel) loraComponent() string  { return "unet" }
func (m *DiTTransformer2DModel) loraComponent() string { return "transformer" }
func (m *AutoencoderKL) loraComponent() string         { return "vae" }

// adaptedLayer is a linear or conv layer of a model, by module path.
type adaptedLayer struct {
	lin  *linearLayer
	conv *convLayer
}

// layersOf lists the model's linear and conv layers by dotted module path.
func layersOf(m nn.Module) map[string]adaptedLayer {
	out := map[string]adaptedLayer{}
	var walk func(prefix string, m nn.Module)
	walk = func(prefix string, m nn.Module) {
		switch l := m.(type) {
		case *linearLayer:
			out[prefix] = adaptedLayer{lin: l}
		case *convLayer:
			out[prefix] = adaptedLayer{conv: l}
		}
		c, ok := m.(interface{ Children() []nn.NamedModule })
		if !ok {
			return
		}
		for _, child := range c.Children() {
			name := child.Name
			if prefix != "" {
				name = prefix + "." + name
			}
			walk(name, child.Module)
		}
	}
	walk("", m)
	return out
}

// match pairs the LoRA's layers for m's component with m's layers,
// checking shapes; a LoRA for another model fails naming the layers that
// match nothing.
func (l *LoRA) match(m Adaptable) ([]*LoRALayer, []adaptedLayer, error) {
	component := m.loraComponent()
	layers := layersOf(m)
	byKohya := map[string]string{}
	if l.Format == "kohya" {
		for name := range layers {
			byKohya[strings.ReplaceAll(name, ".", "_")] = name
		}
	}
	var mine []*LoRALayer
	var targets []adaptedLayer
	var missing, others []string
	for _, ll := range l.Layers {
		if ll.Component != component && ll.Component != "" {
			others = append(others, ll.Component)
			continue
		}
		name := ll.Name
		if l.Format == "kohya" {
			name = byKohya[ll.Name]
		}
		t, ok := layers[name]
		if !ok {
			missing = append(missing, ll.Name)
			continue
		}
		if err := checkLoRAShape(ll, t); err != nil {
			return nil, nil, err
		}
		mine, targets = append(mine, ll), append(targets, t)
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		return nil, nil, fmt.Errorf("diffuse: LoRA: %d of its %s layers match no linear or conv layer of the model (a LoRA for another model?): %s",
			len(missing), component, strings.Join(shown, ", "))
	}
	if len(mine) == 0 {
		return nil, nil, fmt.Errorf("diffuse: LoRA: no layer is for the %s (the file's layers are for %s)", component, strings.Join(uniq(others), ", "))
	}
	return mine, targets, nil
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func checkLoRAShape(ll *LoRALayer, t adaptedLayer) error {
	ds, us := ll.Down.Shape(), ll.Up.Shape()
	if t.lin != nil {
		if len(ds) != 2 || ds[1] != t.lin.In || us[0] != t.lin.Out {
			return fmt.Errorf("diffuse: LoRA: layer %s: down %v and up %v do not fit a linear layer of %d inputs and %d outputs",
				ll.Name, ds, us, t.lin.In, t.lin.Out)
		}
		return nil
	}
	g := t.conv.ConvGeometry
	if len(ds) != 4 || ds[1] != g.In || ds[2] != g.Kernel[0] || ds[3] != g.Kernel[1] || us[0] != g.Out {
		return fmt.Errorf("diffuse: LoRA: layer %s: down %v and up %v do not fit a %d×%d conv of %d inputs and %d outputs",
			ll.Name, ds, us, g.Kernel[0], g.Kernel[1], g.In, g.Out)
	}
	return nil
}

// Adapter is a LoRA applied to a model at run time (Apply): the model's
// weights are untouched and each adapted layer adds scale·up(down(x)).
// SetScale and Remove change it between forwards; neither is safe while a
// Forward of the model runs.
type Adapter struct {
	layers []*lowRank
	owners []adaptedLayer
}

// Apply adds the LoRA's layers for m (its "unet", "transformer" or "vae"
// layers, and those without a component) to m's forward at scale (1 is
// the LoRA as trained; diffusers' cross_attention_kwargs scale and
// set_adapters weights are this scale). Adapters stack: applying two
// sums their contributions.
func (l *LoRA) Apply(m Adaptable, scale float64) (*Adapter, error) {
	mine, targets, err := l.match(m)
	if err != nil {
		return nil, err
	}
	a := &Adapter{}
	for i, ll := range mine {
		t := targets[i]
		var w *core.Tensor
		if t.lin != nil {
			w = t.lin.Weight.Tensor()
		} else {
			w = t.conv.Weight.Tensor()
		}
		down, err := nn.NewParameter(ll.Down.Cast(w.DType()).To(w.Device()))
		if err != nil {
			return nil, fmt.Errorf("diffuse: LoRA: layer %s: %w", ll.Name, err)
		}
		up, err := nn.NewParameter(ll.Up.Cast(w.DType()).To(w.Device()))
		if err != nil {
			return nil, fmt.Errorf("diffuse: LoRA: layer %s: %w", ll.Name, err)
		}
		d := &lowRank{base: ll.Scale(), scale: ll.Scale() * scale}
		if t.lin != nil {
			d.down = &nn.Linear{In: t.lin.In, Out: ll.Rank(), Weight: down}
			d.up = &nn.Linear{In: ll.Rank(), Out: t.lin.Out, Weight: up}
			t.lin.deltas = append(t.lin.deltas, d)
		} else {
			g := t.conv.ConvGeometry
			dg := g
			dg.Out = ll.Rank()
			ug := nn.ConvGeometry{In: ll.Rank(), Out: g.Out, Kernel: []int{1, 1}, Stride: []int{1, 1},
				Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1}
			d.down = &nn.Conv2d{ConvGeometry: dg, Weight: down}
			d.up = &nn.Conv2d{ConvGeometry: ug, Weight: up}
			t.conv.deltas = append(t.conv.deltas, d)
		}
		a.layers, a.owners = append(a.layers, d), append(a.owners, t)
	}
	return a, nil
}

// Layers is how many of the model's layers the adapter changes.
func (a *Adapter) Layers() int { return len(a.layers) }

// SetScale changes the adapter's scale (0 switches it off).
func (a *Adapter) SetScale(scale float64) {
	for _, d := range a.layers {
		d.scale = d.base * scale
	}
}

// Remove takes the adapter out of the model's forward.
func (a *Adapter) Remove() {
	for i, d := range a.layers {
		t := a.owners[i]
		if t.lin != nil {
			t.lin.deltas = without(t.lin.deltas, d)
		} else {
			t.conv.deltas = without(t.conv.deltas, d)
		}
	}
	a.layers, a.owners = nil, nil
}

func without(ds []*lowRank, d *lowRank) []*lowRank {
	out := ds[:0:0]
	for _, x := range ds {
		if x != d {
			out = append(out, x)
		}
	}
	return out
}

// Merge adds scale·alpha/rank·up·down into the weights of m's adapted
// layers, in the weights' dtype on their device: the forward then costs
// nothing extra. Unmerge with the same scale subtracts it again, which
// restores the weights up to float rounding (one rounding of each weight
// per merge and per unmerge).
func (l *LoRA) Merge(m Adaptable, scale float64) error { return l.merge(m, scale, "Merge") }

// Unmerge subtracts what Merge with scale added.
func (l *LoRA) Unmerge(m Adaptable, scale float64) error { return l.merge(m, -scale, "Unmerge") }

func (l *LoRA) merge(m Adaptable, scale float64, op string) error {
	if u, ok := m.(*UNet2DConditionModel); ok && u.stream != nil {
		// Its weights stay in the file between uses; a merge would write
		// into placeholders. Apply (unmerged, at run time) works instead.
		return fmt.Errorf("diffuse: LoRA.%s: the UNet streams its weights from the checkpoint (LoadUNet2DConditionStreamed); apply the LoRA with Apply, or load the UNet whole", op)
	}
	mine, targets, err := l.match(m)
	if err != nil {
		return err
	}
	if err := refuseInt8Merge(op, mine, targets); err != nil {
		return err
	}
	defer core.NoGradScope()()
	for i, ll := range mine {
		t := targets[i]
		var p *nn.Parameter
		if t.lin != nil {
			p = t.lin.Weight
		} else {
			p = t.conv.Weight
		}
		w := p.Tensor()
		r := ll.Rank()
		down := ll.Down.Cast(w.DType()).To(w.Device()).Reshape(core.Shape{r, ll.Down.Shape().Numel() / r})
		up := ll.Up.Cast(w.DType()).To(w.Device()).Reshape(core.Shape{dimOf(ll.Up, 0), r})
		delta := up.Matmul(down).Reshape(w.Shape())
		if err := p.Set(w.Add(mul(delta, ll.Scale()*scale))); err != nil {
			return fmt.Errorf("diffuse: LoRA.%s: layer %s: %w", op, ll.Name, err)
		}
	}
	return nil
}
