package auto

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The quantisation agent (issue 22 item 8): each nn.Linear layer of a
// model gets a setting, quant.<layer>, whose value is how its weight is
// stored - f32, int8 (symmetric, one scale per output row), bf16 or f16.
// A proposal quantises layers; the guard (accuracy on the user's
// validation set) must hold with the change applied, and the KPI is the
// bytes those layers take stored, so a change is kept only where it both
// shrinks the model and keeps it accurate. The weights stay f32 tensors
// holding the quantised values (what the model computes with after
// dequantising); the original values are kept so every mode is derived
// from them and f32 restores them exactly.

// QuantAgentName names the quantisation agent in the journal.
const QuantAgentName = "quant"

// QuantModes are the storage modes a layer can take.
var QuantModes = []string{"f32", "int8", "bf16", "f16"}

type quantLayer struct {
	name   string
	lin    *nn.Linear
	master *core.Tensor // the f32 weight as the model came
	mode   string
}

// QuantAgent quantises a model's linear layers under an accuracy guard.
type QuantAgent struct {
	fw     *Framework
	policy Proposer
	model  string
	layers []*quantLayer
	guard  func() (GuardResult, error)
}

// AccuracyGuard holds when eval (accuracy on a validation set, higher
// better) is at least floor.
func AccuracyGuard(eval func() (float64, error), floor float64) func() (GuardResult, error) {
	return func() (GuardResult, error) {
		acc, err := eval()
		if err != nil {
			return GuardResult{}, err
		}
		return GuardResult{Metric: acc, Limit: floor, OK: acc >= floor, Detail: "validation accuracy"}, nil
	}
}

// NewQuantAgent finds the f32 nn.Linear layers of model (name labels its
// weights in the state), registers a setting per layer and the model's
// weights as a state component.
func NewQuantAgent(fw *Framework, policy Proposer, name string, model nn.Module, guard func() (GuardResult, error)) (*QuantAgent, error) {
	if guard == nil {
		return nil, fmt.Errorf("auto: quantising %s needs an accuracy guard", name)
	}
	a := &QuantAgent{fw: fw, policy: policy, model: name, guard: guard}
	walkLinear(name, model, func(path string, l *nn.Linear) {
		if l.Weight.DType() == core.F32 {
			a.layers = append(a.layers, &quantLayer{name: path, lin: l, master: l.Weight.Tensor(), mode: "f32"})
		}
	})
	if len(a.layers) == 0 {
		return nil, fmt.Errorf("auto: model %s has no f32 nn.Linear layer to quantise", name)
	}
	for _, l := range a.layers {
		l := l
		if err := fw.settings.Add(Setting{Name: "quant." + l.name, Doc: "storage of " + l.name + "'s weight", Choices: QuantModes,
			Get: func() string { return l.mode },
			Set: func(v string) error { return l.set(v) }}); err != nil {
			return nil, err
		}
	}
	if err := fw.state.Add(weights{label: "weights:" + name, model: model}); err != nil {
		return nil, err
	}
	return a, nil
}

// walkLinear calls fn for every nn.Linear in m's tree, with its dotted path.
func walkLinear(path string, m nn.Module, fn func(string, *nn.Linear)) {
	if l, ok := m.(*nn.Linear); ok {
		fn(path, l)
		return
	}
	p, ok := m.(interface{ Children() []nn.NamedModule })
	if !ok {
		return
	}
	for _, c := range p.Children() {
		child := c.Name
		if path != "" {
			child = path + "." + c.Name
		}
		walkLinear(child, c.Module, fn)
	}
}

// set derives the layer's weight in mode from the original values.
func (l *quantLayer) set(mode string) error {
	var w *core.Tensor
	switch mode {
	case "f32":
		w = l.master
	case "int8":
		v, err := l.master.Float32s()
		if err != nil {
			return err
		}
		rows, cols := l.lin.Out, l.lin.In
		scales := make([]float64, rows)
		zeros := make([]int, rows)
		for r := range rows {
			m := 0.0
			for _, x := range v[r*cols : (r+1)*cols] {
				m = math.Max(m, math.Abs(float64(x)))
			}
			scales[r] = m / 127
			if scales[r] == 0 {
				scales[r] = 1 // an all-zero row: any scale stores it exactly
			}
		}
		attrs := core.Attrs{"scale": scales, "zero_point": zeros, "axis": 0}
		q := core.Call1("quantize", core.Attrs{"scale": scales, "zero_point": zeros, "axis": 0, "dtype": core.I8}, l.master)
		w = core.Call1("dequantize", attrs, q)
	case "bf16":
		w = l.master.Cast(core.BF16).Cast(core.F32)
	case "f16":
		w = l.master.Cast(core.F16).Cast(core.F32)
	default:
		return fmt.Errorf("layer %s: no quantisation mode %q (modes: %v)", l.name, mode, QuantModes)
	}
	if err := w.Err(); err != nil {
		return fmt.Errorf("layer %s to %s: %w", l.name, mode, err)
	}
	if err := l.lin.Weight.Set(w); err != nil {
		return fmt.Errorf("layer %s to %s: %w", l.name, mode, err)
	}
	l.mode = mode
	return nil
}

// storedBytes is what the layer's weight takes in its mode (int8 adds a
// 4-byte scale per row).
func (l *quantLayer) storedBytes() float64 {
	n := float64(l.lin.Out * l.lin.In)
	switch l.mode {
	case "int8":
		return n + 4*float64(l.lin.Out)
	case "bf16", "f16":
		return 2 * n
	}
	return 4 * n
}

// bytesOf is a workload whose KPI is the stored bytes of the layers a
// change touches: deterministic, so the A/B test is decided by the
// change alone.
type bytesOf struct {
	name   string
	layers []*quantLayer
}

func (b bytesOf) Name() string { return b.name }

func (b bytesOf) Run() (float64, error) {
	s := 0.0
	for _, l := range b.layers {
		s += l.storedBytes()
	}
	return s, nil
}

// Quantize asks the policy for layers to quantise, round after round (a
// layer whose int8 broke the guard is offered a wider format next), until
// it proposes nothing new; then it checks the guard on the whole model and
// rolls back the latest kept layers until it holds, since errors that each
// layer's guard tolerated alone can add up.
func (a *QuantAgent) Quantize() ([]Decision, error) {
	var out []Decision
	for round := 0; round < len(QuantModes)+1; round++ {
		req := Request{Agent: QuantAgentName, Workload: a.model, Settings: a.fw.settings.Info(a.settingNames()...),
			History: a.fw.history(QuantAgentName, "")}
		for _, l := range a.layers {
			req.Layers = append(req.Layers, LayerInfo{Name: l.name, Params: l.lin.Out * l.lin.In, Mode: l.mode})
		}
		props, _, err := ask(a.policy, req)
		if err != nil {
			return out, err
		}
		if len(props) == 0 {
			break
		}
		for _, p := range props {
			d, err := a.fw.Evaluate(QuantAgentName, a.policy.PolicyName(), p, Trial{Workloads: []Workload{a.bytesOf(p)}, Guard: a.guard})
			out = append(out, d)
			if err != nil {
				return out, err
			}
		}
	}
	for {
		g, err := a.guard()
		if err != nil {
			return out, err
		}
		if g.OK {
			return out, nil
		}
		last := ""
		undone := a.fw.journal.undone()
		for _, d := range a.fw.journal.Decisions() {
			if d.Agent == QuantAgentName && d.Verdict == Kept && !undone[d.ID] {
				last = d.ID
			}
		}
		if last == "" {
			return out, fmt.Errorf("auto: %s fails its guard (%v < %v) with no quantised layer left to roll back", a.model, g.Metric, g.Limit)
		}
		r, err := a.fw.Rollback(last)
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
}

func (a *QuantAgent) settingNames() []string {
	out := make([]string, len(a.layers))
	for i, l := range a.layers {
		out[i] = "quant." + l.name
	}
	return out
}

// bytesOf is the KPI workload of proposal p: the layers it changes.
func (a *QuantAgent) bytesOf(p Proposal) Workload {
	b := bytesOf{name: "stored bytes of"}
	for _, l := range a.layers {
		if _, ok := p.Change["quant."+l.name]; ok {
			b.layers = append(b.layers, l)
			b.name += " " + l.name
		}
	}
	return b
}

// Modes is each layer's storage mode now.
func (a *QuantAgent) Modes() map[string]string {
	out := map[string]string{}
	for _, l := range a.layers {
		out[l.name] = l.mode
	}
	return out
}

// weights is a model's parameters as a state component.
type weights struct {
	label string
	model nn.Module
}

type savedParam struct {
	Name  string     `json:"name"`
	DType core.DType `json:"dtype"`
	Shape core.Shape `json:"shape"`
	Data  []byte     `json:"data"`
}

func (w weights) Name() string { return w.label }

func (w weights) Snapshot() ([]byte, error) {
	var out []savedParam
	for _, np := range w.model.NamedParameters() {
		b, err := np.Param.Tensor().Bytes()
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", np.Name, err)
		}
		out = append(out, savedParam{Name: np.Name, DType: np.Param.DType(), Shape: np.Param.Shape(), Data: b})
	}
	return json.Marshal(out)
}

func (w weights) Restore(data []byte) error {
	var saved []savedParam
	if err := json.Unmarshal(data, &saved); err != nil {
		return fmt.Errorf("weights snapshot: %w", err)
	}
	params := w.model.NamedParameters()
	if len(saved) != len(params) {
		return fmt.Errorf("the snapshot holds %d parameters, the model has %d", len(saved), len(params))
	}
	for i, np := range params {
		s := saved[i]
		if s.Name != np.Name {
			return fmt.Errorf("snapshot parameter %d is %s, the model's is %s", i, s.Name, np.Name)
		}
		if err := np.Param.Set(core.FromBytes(s.DType, s.Shape, s.Data, np.Param.Tensor().Device())); err != nil {
			return fmt.Errorf("parameter %s: %w", np.Name, err)
		}
	}
	return nil
}
