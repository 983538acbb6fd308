package wtplugin

import (
	"encoding/json"
	"fmt"
)

// PolicySpec declares a policy: a decision the host asks the module for,
// JSON in and JSON out (see ABI.md, "Policies"). Policies are the brains of
// webtensor's auto-agents; the host measures what a policy proposes and
// keeps it only when it is better.
type PolicySpec struct {
	Name string `json:"name"` // an identifier, e.g. "kernel_variant"
	Doc  string `json:"doc"`
}

// Decide answers one request: req is the host's JSON, the reply is
// marshalled back to JSON.
type Decide func(req json.RawMessage) (reply any, err error)

type registeredPolicy struct {
	spec   PolicySpec
	decide Decide
}

var policies []registeredPolicy

// RegisterPolicy adds a policy. Like Register it panics on a malformed
// declaration.
func RegisterPolicy(spec PolicySpec, decide Decide) {
	switch {
	case pluginName == "":
		panic("wtplugin.RegisterPolicy: call wtplugin.Plugin(name, version) first")
	case spec.Name == "" || spec.Doc == "":
		panic(fmt.Sprintf("wtplugin.RegisterPolicy: policy %q needs a name and a doc line", spec.Name))
	case decide == nil:
		panic("wtplugin.RegisterPolicy: " + spec.Name + ": nil decide function")
	}
	for _, p := range policies {
		if p.spec.Name == spec.Name {
			panic("wtplugin.RegisterPolicy: " + spec.Name + " registered twice")
		}
	}
	policies = append(policies, registeredPolicy{spec, decide})
	manifestJSON = nil
}

// RunPolicy calls a registered policy the way the host does, for the
// plugin's native tests.
func RunPolicy(name string, req any) (json.RawMessage, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	for i, p := range policies {
		if p.spec.Name == name {
			return runDecide(i, raw)
		}
	}
	return nil, fmt.Errorf("no policy %q", name)
}

func runDecide(index int, req []byte) (out json.RawMessage, err error) {
	if index < 0 || index >= len(policies) {
		return nil, fmt.Errorf("%s: no policy number %d", pluginName, index)
	}
	p := policies[index]
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s policy %s: panic: %v", pluginName, p.spec.Name, r)
		}
	}()
	reply, err := p.decide(req)
	if err != nil {
		return nil, fmt.Errorf("%s policy %s: %w", pluginName, p.spec.Name, err)
	}
	return json.Marshal(reply)
}
