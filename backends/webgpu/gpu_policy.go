package webgpu

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/core/config"
)

// The policy every device's tuner asks, set for the process: by
// SetDefaultPolicy (wt_tuning_policy_set in the C ABI and the SDKs) or by
// WEBTENSOR_TUNING_POLICY, a module that a policy loader turns into a
// Policy. The loader comes from a program that links the plugin host (abi,
// the CLI): this package runs no WebAssembly itself.
var processPolicy struct {
	mu      sync.Mutex
	loader  func(spec string) (Policy, error)
	policy  Policy
	set     bool // SetDefaultPolicy was called: the variable is not read
	loaded  bool // the variable was read (once)
	loadErr error
	opened  []*Backend
}

// SetPolicyLoader installs the function that loads the policy
// WEBTENSOR_TUNING_POLICY names ("module.wasm" or "module.wasm#policy").
func SetPolicyLoader(load func(spec string) (Policy, error)) {
	processPolicy.mu.Lock()
	defer processPolicy.mu.Unlock()
	processPolicy.loader = load
}

// SetDefaultPolicy makes p the policy of every WebGPU device, those open
// and those opened later, in place of WEBTENSOR_TUNING_POLICY; nil goes
// back to timing every variant.
func SetDefaultPolicy(p Policy) {
	pp := &processPolicy
	pp.mu.Lock()
	pp.policy, pp.set = p, true
	opened := append([]*Backend(nil), pp.opened...)
	pp.mu.Unlock()
	for _, b := range opened {
		b.SetPolicy(p)
	}
}

// DefaultPolicyName is the name of the process's policy, "" when there is
// none (or it failed to load).
func DefaultPolicyName() string {
	p, _ := configuredPolicy()
	if p == nil {
		return ""
	}
	return p.PolicyName()
}

// configuredPolicy is the process's policy: the one set, else the one the
// variable names, loaded on first use.
func configuredPolicy() (Policy, error) {
	pp := &processPolicy
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.set {
		return pp.policy, nil
	}
	if !pp.loaded {
		pp.loaded = true
		pp.policy, pp.loadErr = loadConfiguredPolicy(pp.loader)
	}
	return pp.policy, pp.loadErr
}

func loadConfiguredPolicy(load func(string) (Policy, error)) (Policy, error) {
	spec := config.String("WEBTENSOR_TUNING_POLICY")
	if spec == "" {
		return nil, nil
	}
	if load == nil {
		return nil, fmt.Errorf("WEBTENSOR_TUNING_POLICY=%q: this program has no plugin host to load it (the C ABI, the SDKs and the CLI do; a Go program calls webgpu.SetDefaultPolicy with a plugins.Policy)", spec)
	}
	p, err := load(spec)
	if err != nil {
		return nil, fmt.Errorf("WEBTENSOR_TUNING_POLICY=%q: %w (unset it, or build the default policy with make plugins: build/plugins/policy-kernel-variant.wasm)", spec, err)
	}
	return p, nil
}

// adoptPolicy gives a newly opened device the process's policy and
// remembers it for later changes. A policy that fails to load fails the
// open: a tuning setting the user asked for is not dropped in silence.
func adoptPolicy(b *Backend) error {
	p, err := configuredPolicy()
	if err != nil {
		return fmt.Errorf("webgpu: %w", err)
	}
	b.SetPolicy(p)
	pp := &processPolicy
	pp.mu.Lock()
	pp.opened = append(pp.opened, b)
	pp.mu.Unlock()
	return nil
}

// TuningJSON is the device's kernel-variant decisions (Tuning) as JSON: an
// object from "op|class" to the variant kept, the timings, and what a
// policy proposed and why.
func (b *Backend) TuningJSON() ([]byte, error) {
	return json.Marshal(b.Tuning())
}
