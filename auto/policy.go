package auto

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/auto/wire"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// Proposer answers an agent's request with proposals. A WebAssembly
// policy (WasmPolicy) is the shipped kind; tests and embedders may supply
// their own, and the framework treats every answer the same way: as
// claims to measure.
type Proposer interface {
	PolicyName() string
	Propose(req Request) ([]Proposal, error)
}

// The JSON an agent and its policy exchange, declared in package wire so
// that policy modules built for WebAssembly use the same types.
type (
	Request     = wire.Request
	HotOp       = wire.HotOp
	LayerInfo   = wire.LayerInfo
	Outcome     = wire.Outcome
	Reply       = wire.Reply
	Proposal    = wire.Proposal
	LoaderInfo  = wire.LoaderInfo
	SettingInfo = wire.SettingInfo
	// KernelInfo and VariantTiming are the kernel agent's WebGPU decisions
	// and their screened variants (kernel_webgpu.go).
	KernelInfo    = wire.KernelInfo
	VariantTiming = wire.VariantTiming
)

// WasmPolicy is a policy module on the plugin host: the request goes in
// as JSON, the proposals come out as JSON, under the host's deadline and
// memory cap, so a policy that loops or traps costs one error.
type WasmPolicy struct{ P *plugins.Policy }

// PolicyName is "<plugin>.<policy>".
func (w WasmPolicy) PolicyName() string { return w.P.PolicyName() }

// Propose asks the module.
func (w WasmPolicy) Propose(req Request) ([]Proposal, error) {
	var r Reply
	if err := w.P.Decide(req, &r); err != nil {
		return nil, err
	}
	return r.Proposals, nil
}

// DefaultPolicyFile is where `make plugins` builds the shipped policy
// module (plugins-wasm/policies/auto), relative to the repository root.
// It declares the policies "kernel", "data" and "quant".
const DefaultPolicyFile = "build/plugins/policy-auto.wasm"

// LoadPolicy loads spec ("module.wasm#policy") on host. For a spec of
// "default#<policy>" it looks for DefaultPolicyFile in the working folder
// and its parents, so the CLI finds it from anywhere in the repository.
// A module can be loaded once per process: to take several policies from
// one module, use Policies.
func LoadPolicy(ctx context.Context, host *plugins.Host, spec string) (WasmPolicy, error) {
	return NewPolicies(host).Load(ctx, spec)
}

// Policies loads policy modules on a host, each module once, so the
// kernel and data policies of one module share it (a plugin's name can be
// loaded once per process).
type Policies struct {
	host   *plugins.Host
	mu     sync.Mutex
	byPath map[string]*plugins.Plugin
}

// NewPolicies loads on host.
func NewPolicies(host *plugins.Host) *Policies {
	return &Policies{host: host, byPath: map[string]*plugins.Plugin{}}
}

// Load returns spec's policy ("module.wasm#policy"; "default#<policy>"
// as LoadPolicy), loading its module on first use.
func (ps *Policies) Load(ctx context.Context, spec string) (WasmPolicy, error) {
	path, name, _ := strings.Cut(spec, "#")
	if path == "default" {
		var err error
		if path, err = findUp(DefaultPolicyFile); err != nil {
			return WasmPolicy{}, err
		}
	}
	if path == "" {
		return WasmPolicy{}, fmt.Errorf("auto: policy %q names no module file (want module.wasm#policy)", spec)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.byPath[path]
	if !ok {
		var err error
		if p, err = ps.host.LoadFile(ctx, path); err != nil {
			return WasmPolicy{}, fmt.Errorf("auto: policy %s: %w", spec, err)
		}
		ps.byPath[path] = p
	}
	q, err := p.PolicyOrOnly(name)
	if err != nil {
		return WasmPolicy{}, fmt.Errorf("auto: policy %s: %w", spec, err)
	}
	return WasmPolicy{P: q}, nil
}

// DefaultPolicyPath is DefaultPolicyFile found in the working folder or
// one above it (what "default#<policy>" loads).
func DefaultPolicyPath() (string, error) { return findUp(DefaultPolicyFile) }

// findUp looks for rel in the working folder and each parent.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("auto: %s not found in the working folder or above it: build it with make plugins, or name a policy module", rel)
		}
		dir = parent
	}
}

// maxProposals bounds what one answer may make the framework measure: a
// policy that floods proposals would otherwise buy itself unbounded time
// on the user's machine.
const maxProposals = 8

// ask sends req to p and returns at most req.Max proposals; the rest are
// dropped and counted in the returned note.
func ask(p Proposer, req Request) ([]Proposal, string, error) {
	if req.Max <= 0 || req.Max > maxProposals {
		req.Max = maxProposals
	}
	props, err := p.Propose(req)
	if err != nil {
		return nil, "", fmt.Errorf("auto: policy %s: %w", p.PolicyName(), err)
	}
	note := ""
	if len(props) > req.Max {
		note = fmt.Sprintf("policy %s sent %d proposals; the first %d were measured", p.PolicyName(), len(props), req.Max)
		props = props[:req.Max]
	}
	return props, note, nil
}

// history turns the agent's earlier decisions on workload into outcomes
// for a policy ("" takes every workload). Other workloads' outcomes are left out: one thread losing
// on a large workload says nothing about a small one.
func (fw *Framework) history(agent, workload string) []Outcome {
	var out []Outcome
	for _, d := range fw.journal.Decisions() {
		if d.Agent != agent || d.Proposal == nil || (workload != "" && d.Workload != workload) {
			continue
		}
		o := Outcome{Change: d.Proposal.Change, Verdict: d.Verdict}
		if d.Trial != nil {
			o.Gain = d.Trial.Gain
		}
		out = append(out, o)
	}
	if len(out) > 64 {
		out = out[len(out)-64:]
	}
	return out
}
