package diffuse

import (
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// CompiledUNet runs a UNet2DConditionModel's forward pass as a graph of the
// IR (core/ir): traced once per input shape, optimised, and fused for the
// model's device, so the ResNet blocks' GroupNorm+SiLU are one kernel each,
// elementwise chains (GEGLU, residual adds) one launch, matmuls take their
// bias and activation epilogues, and attention writes its heads in place.
// It has the model's Forward, so it can stand in for the model in a
// CondPipeline (p.Model = compiled). Compile after loading adapters: the
// graph holds the weights it was traced with, so a LoRA applied, merged or
// rescaled later is not seen (Retrace drops the graphs). A compiled int8
// model's dequantised weights of small layers are folded into constants,
// trading part of its memory saving for speed.
type CompiledUNet struct {
	Model *UNet2DConditionModel

	mu     sync.Mutex
	graphs map[string]*compiledGraph
}

type compiledGraph struct {
	g      *ir.Graph
	report ir.FuseReport
}

// CompileUNet2DCondition returns m's compiled forward pass. A model that
// streams its weights cannot be compiled: the graph would hold every
// layer's weights at once, which streaming exists to avoid.
func CompileUNet2DCondition(m *UNet2DConditionModel) (*CompiledUNet, error) {
	if m.stream != nil {
		return nil, fmt.Errorf("diffuse: CompileUNet2DCondition: the model streams its weights; a compiled graph would hold all of them (load it without streaming to compile)")
	}
	return &CompiledUNet{Model: m, graphs: map[string]*compiledGraph{}}, nil
}

// Forward is UNet2DConditionModel.Forward through the compiled graph for
// these shapes (traced on the first call with them).
func (c *CompiledUNet) Forward(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor) (*core.Tensor, error) {
	m := c.Model
	if err := m.checkInputs(sample, encoderHiddenStates); err != nil {
		return nil, err
	}
	ts := make([]float64, dimOf(sample, 0))
	for i := range ts {
		ts[i] = t
	}
	emb := m.embedTimesteps(ts)
	cg, err := c.graph(sample, emb, encoderHiddenStates)
	if err != nil {
		return nil, err
	}
	// As the eager forward (denoise) does: with gradients on, the weights'
	// requires_grad would make every fused node run its recording path
	// (attention unfused, its heads merged by a copy) and keep every
	// intermediate alive for a backward that never comes.
	var outs []*core.Tensor
	core.NoGrad(func() { outs, err = cg.g.Run(sample, emb, encoderHiddenStates) })
	if err != nil {
		return nil, fmt.Errorf("diffuse: compiled UNet2DConditionModel: %w", err)
	}
	return outs[0], nil
}

// FuseReport is what fusion did to the graph for these input shapes
// (zero before their first Forward).
func (c *CompiledUNet) FuseReport(sample, encoderHiddenStates core.Shape) ir.FuseReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	emb := core.Shape{sample[0], c.Model.Config.BlockOutChannels[0]}
	if cg, ok := c.graphs[graphKey(sample, emb, encoderHiddenStates)]; ok {
		return cg.report
	}
	return ir.FuseReport{}
}

// Retrace drops the compiled graphs: the next Forward traces the model as
// it is then (after its weights or adapters changed).
func (c *CompiledUNet) Retrace() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.graphs = map[string]*compiledGraph{}
}

// Device is the model's device.
func (c *CompiledUNet) Device() core.Device { return c.Model.Device() }

// DType is the model's dtype.
func (c *CompiledUNet) DType() core.DType { return c.Model.DType() }

func graphKey(shapes ...core.Shape) string { return fmt.Sprint(shapes) }

// graph is the graph for these inputs, traced, optimised and fused on
// first use.
func (c *CompiledUNet) graph(x, emb, ctx *core.Tensor) (*compiledGraph, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := graphKey(x.Shape(), emb.Shape(), ctx.Shape())
	if cg, ok := c.graphs[key]; ok {
		return cg, nil
	}
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		out, err := c.Model.denoise(in[0], in[1], in[2], nil)
		return []*core.Tensor{out}, err
	}, x, emb, ctx)
	if err != nil {
		return nil, fmt.Errorf("diffuse: compiling UNet2DConditionModel: %w", err)
	}
	if _, err := g.OptimizeStats(); err != nil {
		return nil, fmt.Errorf("diffuse: compiling UNet2DConditionModel: %w", err)
	}
	rep, err := g.Fuse(c.Model.Device())
	if err != nil {
		return nil, fmt.Errorf("diffuse: compiling UNet2DConditionModel: %w", err)
	}
	cg := &compiledGraph{g: g, report: rep}
	c.graphs[key] = cg
	return cg, nil
}
