package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/auto/wire"
	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

func main() {}

// The request and reply are package auto's, from its leaf package wire
// (this module cannot import auto itself: it links the backends).
type (
	Setting  = wire.SettingInfo
	HotOp    = wire.HotOp
	Layer    = wire.LayerInfo
	Outcome  = wire.Outcome
	Request  = wire.Request
	Loader   = wire.LoaderInfo
	Proposal = wire.Proposal
	Reply    = wire.Reply
)

func init() {
	wtplugin.Plugin("auto", "0.1.0")
	wtplugin.RegisterPolicy(wtplugin.PolicySpec{Name: "kernel",
		Doc: "Proposes kernel settings from a workload's hot ops: one CPU thread for small ops, every thread for large ones, fused graphs where elementwise ops are hot, and on WebGPU the synthesised kernel variants that screened fastest for the hot decisions."}, decideKernel)
	wtplugin.RegisterPolicy(wtplugin.PolicySpec{Name: "data",
		Doc: "Proposes a data loader's pipeline from its profile: a record cache where decoding costs far more than a copy, workers where a batch takes long to read on one goroutine, none where it takes less than a hand-off."}, decideData)
	wtplugin.RegisterPolicy(wtplugin.PolicySpec{Name: "quant",
		Doc: "Proposes quantising the largest layers first: int8, then bf16 and f16 for a layer whose int8 broke the accuracy guard."}, decideQuant)
}

func parse(raw json.RawMessage) (Request, error) {
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("request: %w", err)
	}
	return r, nil
}

// failed is whether an earlier decision already measured change and did
// not keep it: proposing it again would only spend the user's time.
func failed(r Request, change map[string]string) bool {
	for _, o := range r.History {
		if o.Verdict == "kept" || len(o.Change) != len(change) {
			continue
		}
		same := true
		for k, v := range change {
			if o.Change[k] != v {
				same = false
			}
		}
		if same {
			return true
		}
	}
	return false
}

func setting(r Request, name string) (Setting, bool) {
	for _, s := range r.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// elementwise ops are the ones fusion merges into one kernel.
var elementwise = []string{"add", "sub", "mul", "div", "relu", "gelu", "sigmoid", "tanh", "exp", "neg", "silu", "where", "maximum", "minimum", "pow", "sqrt", "rsqrt", "abs", "clamp"}

func decideKernel(raw json.RawMessage) (any, error) {
	r, err := parse(raw)
	if err != nil {
		return nil, err
	}
	var out []Proposal
	add := func(p Proposal) {
		if !failed(r, p.Change) {
			out = append(out, p)
		}
	}
	var calls int
	var bytes int64
	var ew float64
	for _, h := range r.HotOps {
		calls += h.Calls
		bytes += h.Bytes
		if slices.Contains(elementwise, h.Op) {
			ew += h.Share
		}
	}
	perCall := int64(0)
	if calls > 0 {
		perCall = bytes / int64(calls)
	}
	for _, s := range r.Settings {
		if strings.HasSuffix(s.Name, ".fuse") && s.Current == "off" && slices.Contains(s.Choices, "on") {
			add(Proposal{What: s.Name + "=on", ExpectedGain: 0.5 * ew,
				Why:    fmt.Sprintf("elementwise ops take %.0f%% of the time; fused they make one pass over memory instead of one each", 100*ew),
				Change: map[string]string{s.Name: "on"}})
		}
	}
	if t, ok := setting(r, "cpu.threads"); ok && len(t.Choices) > 1 {
		one, all := t.Choices[0], t.Choices[len(t.Choices)-1]
		switch {
		case perCall < 1<<20 && t.Current != one:
			add(Proposal{What: "cpu.threads=" + one, ExpectedGain: 0.15,
				Why:    fmt.Sprintf("ops move %d bytes a call on average; waking the pool's helpers costs more than they save at that size", perCall),
				Change: map[string]string{"cpu.threads": one}})
		case perCall >= 1<<20 && t.Current != all:
			add(Proposal{What: "cpu.threads=" + all, ExpectedGain: 0.3,
				Why:    fmt.Sprintf("ops move %d bytes a call on average: enough work to split across every core", perCall),
				Change: map[string]string{"cpu.threads": all}})
		}
	}
	for _, k := range r.Kernels {
		for _, p := range kernelVariants(k) {
			add(p)
		}
	}
	if c, ok := setting(r, "cpu.cache_bytes"); ok && c.Current == "0" && len(c.Choices) > 1 {
		add(Proposal{What: "cpu.cache_bytes=" + c.Choices[len(c.Choices)-1], ExpectedGain: 0.1,
			Why:    "the storage cache is off: every op allocates fresh memory, which the OS must zero",
			Change: map[string]string{"cpu.cache_bytes": c.Choices[len(c.Choices)-1]}})
	}
	return Reply{Proposals: capped(out, r.Max)}, nil
}

func capped(ps []Proposal, max int) []Proposal {
	if max > 0 && len(ps) > max {
		return ps[:max]
	}
	if ps == nil {
		return []Proposal{}
	}
	return ps
}

// bytesPer is the storage of one weight in each mode, for the expected
// gain against f32.
var bytesPer = map[string]float64{"f32": 4, "bf16": 2, "f16": 2, "int8": 1}

func decideQuant(raw json.RawMessage) (any, error) {
	r, err := parse(raw)
	if err != nil {
		return nil, err
	}
	layers := slices.Clone(r.Layers)
	sort.SliceStable(layers, func(i, j int) bool { return layers[i].Params > layers[j].Params })
	var out []Proposal
	for _, l := range layers {
		if l.Mode != "f32" {
			continue
		}
		name := "quant." + l.Name
		s, ok := setting(r, name)
		if !ok {
			continue
		}
		for _, mode := range []string{"int8", "bf16", "f16"} {
			change := map[string]string{name: mode}
			if !slices.Contains(s.Choices, mode) || failed(r, change) {
				continue
			}
			why := fmt.Sprintf("%s holds %d weights; %s stores each in %.0f bytes instead of 4", l.Name, l.Params, mode, bytesPer[mode])
			if mode != "int8" {
				why += "; int8 broke the accuracy guard, a wider format keeps more of the mantissa"
			}
			out = append(out, Proposal{What: name + "=" + mode, Why: why, ExpectedGain: 1 - bytesPer[mode]/4, Change: change})
			break
		}
	}
	return Reply{Proposals: capped(out, r.Max)}, nil
}

// kernelVariants proposes, for one hot WebGPU decision, the two fastest
// screened variants that beat the one in force on its own launch by at
// least 5%: the workload's gain is that saving times the decision's share
// of the kernel time. Where nothing is in force (CurrentSeconds 0) the
// fastest is proposed on its own. The agent measures every proposal on the
// whole workload; the screen only orders them.
func kernelVariants(k wire.KernelInfo) []Proposal {
	var out []Proposal
	for _, c := range k.Candidates {
		if len(out) == 2 || c.Seconds <= 0 {
			break
		}
		ratio := 0.0
		if k.CurrentSeconds > 0 {
			ratio = c.Seconds / k.CurrentSeconds
			if ratio > 0.95 {
				break // the candidates come fastest first
			}
		}
		why := fmt.Sprintf("%s (%s) takes %.0f%% of the kernel time; %s ran its launch in %.3g ms",
			k.Key, strings.Join(k.Ops, ", "), 100*k.Share, c.Variant, 1e3*c.Seconds)
		if k.CurrentSeconds > 0 {
			why += fmt.Sprintf(" against %.3g ms for %s", 1e3*k.CurrentSeconds, k.Current)
		}
		out = append(out, Proposal{What: k.Setting + "=" + c.Variant, Why: why, ExpectedGain: k.Share * (1 - ratio),
			Change: map[string]string{k.Setting: c.Variant}})
		if k.CurrentSeconds <= 0 {
			break
		}
	}
	return out
}
