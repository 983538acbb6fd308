package nn

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Module is a layer or a whole model: a tree of named parameters, buffers and
// sub-modules. Embed Base in a struct and register state in the constructor
// to make one; Base provides every method here.
type Module interface {
	// Parameters lists every trainable parameter once, in NamedParameters order.
	Parameters() []*Parameter
	// NamedParameters lists parameters with dotted names ("layers.0.weight"),
	// in PyTorch's named_parameters order; a shared parameter appears once.
	NamedParameters() []NamedParameter
	// NamedBuffers lists buffers (non-trained state such as running means).
	NamedBuffers() []NamedBuffer
	// StateDict lists everything a checkpoint holds, parameters and buffers,
	// with the names and in the order of PyTorch's state_dict.
	StateDict() []NamedState
	// Train switches this module and all its sub-modules between training
	// and evaluation behaviour (dropout, batch statistics).
	Train(on bool)
	// Training reports the mode set by Train; new modules are in training mode.
	Training() bool
}

// Layer is a module with one input and one output, the kind Sequential chains.
type Layer interface {
	Module
	Forward(x *core.Tensor) *core.Tensor
}

// State is one tensor of a state dict: a Parameter or a Buffer.
type State interface {
	Tensor() *core.Tensor
	// Set replaces the value; it must have the same shape and dtype.
	Set(v *core.Tensor) error
}

// NamedParameter pairs a parameter with its dotted name.
type NamedParameter struct {
	Name  string
	Param *Parameter
}

// NamedBuffer pairs a buffer with its dotted name.
type NamedBuffer struct {
	Name   string
	Buffer *Buffer
}

// NamedState pairs a state-dict entry with its dotted name.
type NamedState struct {
	Name  string
	Value State
}

// NamedModule pairs a sub-module with its name within its parent.
type NamedModule struct {
	Name   string
	Module Module
}

// Parameter is a trainable tensor: a leaf that requires a gradient. Optimisers
// never write into its storage; they compute the new value and Set it, which
// keeps the parameter a leaf and keeps its accumulated gradient.
type Parameter struct {
	t *core.Tensor
}

// NewParameter makes a parameter from a floating-point tensor. The tensor is
// detached, so a value computed by ops becomes a fresh leaf.
func NewParameter(t *core.Tensor) (*Parameter, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	leaf := t.Detach().SetRequiresGrad(true)
	if err := leaf.Err(); err != nil {
		return nil, fmt.Errorf("nn: parameter: %w", err)
	}
	return &Parameter{t: leaf}, nil
}

// ParameterOf makes a parameter whose value is t itself, not a detached
// copy as NewParameter makes: for a caller that keeps t elsewhere and reads
// the parameter's value back after an optimiser step (the ABI, whose
// handles hold the tensors the SDKs see). t must be a leaf that requires a
// gradient.
func ParameterOf(t *core.Tensor) (*Parameter, error) {
	p := &Parameter{}
	return p, p.Bind(t)
}

// Bind makes t itself the parameter's value, gradient included (see
// ParameterOf): the ABI's optimisers rebind their parameters to what the
// handles hold before each step, since an SDK may have swapped a value in
// since (a loaded state dict).
func (p *Parameter) Bind(t *core.Tensor) error {
	if err := t.Err(); err != nil {
		return err
	}
	switch {
	case !t.IsLeaf():
		return fmt.Errorf("nn: parameter: the tensor is not a leaf (it was computed from others; detach it)")
	case !t.RequiresGrad():
		return fmt.Errorf("nn: parameter: the tensor does not require a gradient")
	}
	p.t = t
	return nil
}

// Tensor is the current value; use it in forward computations so that
// gradients reach the parameter.
func (p *Parameter) Tensor() *core.Tensor { return p.t }

// Grad is the accumulated gradient (nil before Backward or after ZeroGrad).
func (p *Parameter) Grad() *core.Tensor { return p.t.Grad() }

// SetGrad replaces the accumulated gradient.
func (p *Parameter) SetGrad(g *core.Tensor) { p.t.SetGrad(g) }

// ZeroGrad drops the accumulated gradient, like torch's set_to_none.
func (p *Parameter) ZeroGrad() { p.t.ZeroGrad() }

// Shape is the parameter's shape.
func (p *Parameter) Shape() core.Shape { return p.t.Shape() }

// DType is the parameter's element type.
func (p *Parameter) DType() core.DType { return p.t.DType() }

// Set swaps in a new value of the same shape and dtype. The parameter stays a
// leaf that requires a gradient, and its accumulated gradient is kept, so an
// optimiser step does not disturb code that reads gradients afterwards.
func (p *Parameter) Set(v *core.Tensor) error {
	if err := checkReplacement(p.t, v); err != nil {
		return fmt.Errorf("nn: parameter: %w", err)
	}
	leaf := v.Detach().SetRequiresGrad(true)
	if err := leaf.Err(); err != nil {
		return fmt.Errorf("nn: parameter: %w", err)
	}
	leaf.SetGrad(p.t.Grad())
	p.t = leaf
	return nil
}

// Buffer is module state that is saved in checkpoints but not trained, such
// as BatchNorm's running statistics.
type Buffer struct {
	t *core.Tensor
}

// NewBuffer makes a buffer over t, cut from any autograd graph.
func NewBuffer(t *core.Tensor) (*Buffer, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	return &Buffer{t: t.Detach()}, nil
}

// Tensor is the current value.
func (b *Buffer) Tensor() *core.Tensor { return b.t }

// Set swaps in a new value of the same shape and dtype.
func (b *Buffer) Set(v *core.Tensor) error {
	if err := checkReplacement(b.t, v); err != nil {
		return fmt.Errorf("nn: buffer: %w", err)
	}
	b.t = v.Detach()
	return nil
}

func checkReplacement(old, v *core.Tensor) error {
	if err := v.Err(); err != nil {
		return err
	}
	if !v.Shape().Equal(old.Shape()) || v.DType() != old.DType() {
		return fmt.Errorf("new value has shape %v and dtype %s, want shape %v and dtype %s",
			v.Shape(), v.DType(), old.Shape(), old.DType())
	}
	if v.Device() != old.Device() {
		return fmt.Errorf("new value is on %s, the old one on %s", v.Device(), old.Device())
	}
	return nil
}

type entryKind uint8

const (
	paramEntry entryKind = iota
	bufferEntry
	childEntry
)

type entry struct {
	name   string
	kind   entryKind
	param  *Parameter
	buffer *Buffer
	child  Module
}

// Base holds a module's registered state and training flag. Embed it in a
// module struct; its zero value is an empty module in training mode.
type Base struct {
	entries []entry
	eval    bool
}

// RegisterParameter adds a parameter under name (no dots; unique within the
// module). Registration order is state-dict order.
func (b *Base) RegisterParameter(name string, p *Parameter) error {
	if p == nil {
		return fmt.Errorf("nn: register parameter %q: nil parameter", name)
	}
	if err := b.checkName(name); err != nil {
		return err
	}
	b.addParam(name, p)
	return nil
}

// RegisterBuffer adds a buffer under name.
func (b *Base) RegisterBuffer(name string, buf *Buffer) error {
	if buf == nil {
		return fmt.Errorf("nn: register buffer %q: nil buffer", name)
	}
	if err := b.checkName(name); err != nil {
		return err
	}
	b.addBuffer(name, buf)
	return nil
}

// RegisterModule adds a sub-module under name; its state appears in the
// parent's state dict as "name.<its names>".
func (b *Base) RegisterModule(name string, m Module) error {
	if isNil(m) {
		return fmt.Errorf("nn: register module %q: nil module", name)
	}
	if err := b.checkName(name); err != nil {
		return err
	}
	b.addChild(name, m)
	return nil
}

func (b *Base) checkName(name string) error {
	if name == "" || strings.Contains(name, ".") {
		return fmt.Errorf("nn: invalid name %q: names are non-empty and have no dots", name)
	}
	for _, e := range b.entries {
		if e.name == name {
			return fmt.Errorf("nn: name %q is already registered in this module", name)
		}
	}
	return nil
}

// The add methods skip validation: the built-in modules use fixed,
// known-good names.
func (b *Base) addParam(name string, p *Parameter) {
	b.entries = append(b.entries, entry{name: name, kind: paramEntry, param: p})
}

func (b *Base) addBuffer(name string, buf *Buffer) {
	b.entries = append(b.entries, entry{name: name, kind: bufferEntry, buffer: buf})
}

func (b *Base) addChild(name string, m Module) {
	b.entries = append(b.entries, entry{name: name, kind: childEntry, child: m})
}

// Children lists the direct sub-modules in registration order.
func (b *Base) Children() []NamedModule {
	var out []NamedModule
	for _, e := range b.entries {
		if e.kind == childEntry {
			out = append(out, NamedModule{Name: e.name, Module: e.child})
		}
	}
	return out
}

// NamedParameters lists the module's own parameters, then each child's, with
// dotted names; a parameter shared between modules is listed once, under its
// first name, as in torch.
func (b *Base) NamedParameters() []NamedParameter {
	var out []NamedParameter
	seen := map[*Parameter]bool{}
	add := func(name string, p *Parameter) {
		if !seen[p] {
			seen[p] = true
			out = append(out, NamedParameter{Name: name, Param: p})
		}
	}
	for _, e := range b.entries {
		if e.kind == paramEntry {
			add(e.name, e.param)
		}
	}
	for _, c := range b.Children() {
		for _, np := range c.Module.NamedParameters() {
			add(c.Name+"."+np.Name, np.Param)
		}
	}
	return out
}

// Parameters lists every parameter once.
func (b *Base) Parameters() []*Parameter {
	named := b.NamedParameters()
	out := make([]*Parameter, len(named))
	for i, np := range named {
		out[i] = np.Param
	}
	return out
}

// NamedBuffers lists the module's own buffers, then each child's.
func (b *Base) NamedBuffers() []NamedBuffer {
	var out []NamedBuffer
	for _, e := range b.entries {
		if e.kind == bufferEntry {
			out = append(out, NamedBuffer{Name: e.name, Buffer: e.buffer})
		}
	}
	for _, c := range b.Children() {
		for _, nb := range c.Module.NamedBuffers() {
			out = append(out, NamedBuffer{Name: c.Name + "." + nb.Name, Buffer: nb.Buffer})
		}
	}
	return out
}

// StateDict lists, for this module, its parameters, then its buffers, then
// each child's state dict under the child's name: torch's state_dict order.
// Shared tensors appear under every name, as in torch.
func (b *Base) StateDict() []NamedState {
	var out []NamedState
	for _, e := range b.entries {
		if e.kind == paramEntry {
			out = append(out, NamedState{Name: e.name, Value: e.param})
		}
	}
	for _, e := range b.entries {
		if e.kind == bufferEntry {
			out = append(out, NamedState{Name: e.name, Value: e.buffer})
		}
	}
	for _, c := range b.Children() {
		for _, ns := range c.Module.StateDict() {
			out = append(out, NamedState{Name: c.Name + "." + ns.Name, Value: ns.Value})
		}
	}
	return out
}

// Train sets the mode of this module and every sub-module.
func (b *Base) Train(on bool) {
	b.eval = !on
	for _, c := range b.Children() {
		c.Module.Train(on)
	}
}

// Training reports whether the module is in training mode.
func (b *Base) Training() bool { return !b.eval }

// ZeroGrad drops the gradients of every parameter of m.
func ZeroGrad(m Module) {
	for _, p := range m.Parameters() {
		p.ZeroGrad()
	}
}

// NumParameters counts the scalar values of m's parameters.
func NumParameters(m Module) int {
	n := 0
	for _, p := range m.Parameters() {
		n += p.Shape().Numel()
	}
	return n
}
