package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Policy is one decision a loaded module answers, JSON in and JSON out,
// under the plugin sandbox (memory cap, deadline, no grants). Auto-agents
// ask a policy for a proposal, measure it, and keep it only when it wins;
// the policy never changes anything itself.
type Policy struct {
	p     *Plugin
	name  string
	index int
}

// Policies lists the policies the module declares.
func (p *Plugin) Policies() []string { return slices.Clone(p.spec.policies) }

// Policy returns the named policy of the module.
func (p *Plugin) Policy(name string) (*Policy, error) {
	i := slices.Index(p.spec.policies, name)
	if i < 0 {
		return nil, fmt.Errorf("plugin %s has no policy %q (it has: %v)", p.name, name, p.spec.policies)
	}
	return &Policy{p: p, name: name, index: i}, nil
}

// PolicyOrOnly returns the named policy, or, for "", the module's only
// one (an error names them when it has several or none).
func (p *Plugin) PolicyOrOnly(name string) (*Policy, error) {
	if name != "" {
		return p.Policy(name)
	}
	switch len(p.spec.policies) {
	case 1:
		return p.Policy(p.spec.policies[0])
	case 0:
		return nil, fmt.Errorf("plugin %s declares no policy", p.name)
	}
	return nil, fmt.Errorf("plugin %s has several policies %v: name one (module.wasm#policy)", p.name, p.spec.policies)
}

// LoadPolicy loads the module spec names, "module.wasm" or
// "module.wasm#policy", and returns that policy (PolicyOrOnly).
func (h *Host) LoadPolicy(ctx context.Context, spec string) (*Policy, error) {
	path, name, _ := strings.Cut(spec, "#")
	if path == "" {
		return nil, fmt.Errorf("policy %q names no module file", spec)
	}
	p, err := h.LoadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return p.PolicyOrOnly(name)
}

// PolicyName is "<plugin>.<policy>", for decision records.
func (q *Policy) PolicyName() string { return q.p.name + "." + q.name }

// maxDecisionBytes bounds a reply, so a policy cannot make the host copy
// its whole memory.
const maxDecisionBytes = 1 << 20

// Decide sends request (marshalled to JSON) and unmarshals the reply into
// reply. A trap, a timeout or a malformed reply is an error that names the
// policy; the instance is closed and never serves again.
func (q *Policy) Decide(request, reply any) error {
	in, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("policy %s: request: %w", q.PolicyName(), err)
	}
	var out []byte
	err = q.p.withInstance(func(inst *instance) error {
		out, err = inst.exchange("wt_decide", inst.decide, q.index, in, maxDecisionBytes, errors.New)
		return err
	})
	if err != nil {
		return fmt.Errorf("policy %s: %w", q.PolicyName(), err)
	}
	if err := json.Unmarshal(out, reply); err != nil {
		return fmt.Errorf("policy %s: reply %.200q is not the JSON expected: %w", q.PolicyName(), out, err)
	}
	return nil
}
