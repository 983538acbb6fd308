package abi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// What each wt_call target takes, read from the method itself: the method
// runs in describing mode, where every argument it reads is recorded
// rather than read, and its work is never run. docs/calls.md is written
// from this (make generate), so the list cannot drift from the code.

// CallParam is one argument of a target.
type CallParam struct {
	Name     string
	Kind     string // "string", "integer in [0, 64]", "tensor", ...
	Default  any    // nil: none (required, or absent means none)
	Required bool
}

// CallSpec is one target's arguments, and what its data must hold ("" for
// a target that reads none).
type CallSpec struct {
	Target string
	Params []CallParam
	Data   string
}

// note records an argument while describing.
func (c *CallArgs) note(name, kind string, def any, required bool) {
	if c.spec == nil {
		return
	}
	for i, p := range c.spec.Params {
		if p.Name == name {
			// A getter built on another refines its note (IntIn's range, Path).
			c.spec.Params[i] = CallParam{Name: name, Kind: kind, Default: def, Required: required}
			return
		}
	}
	c.spec.Params = append(c.spec.Params, CallParam{Name: name, Kind: kind, Default: def, Required: required})
}

// describe runs target's method in describing mode, once as if each
// argument it asks about were absent and once as if given: an argument
// read in only one of them (a path or the data; texts or input_ids) is an
// alternative, so not required.
func describe(target string, f CallFunc) CallSpec {
	var runs [2]CallSpec
	for i, given := range []bool{false, true} {
		c := &CallArgs{Target: target, raw: map[string]json.RawMessage{}, read: map[string]bool{}, spec: &runs[i], given: given}
		f(c)
	}
	spec := CallSpec{Target: target, Data: runs[0].Data + runs[1].Data}
	seen := map[string]int{}
	for _, r := range runs {
		for _, p := range r.Params {
			seen[p.Name]++
		}
	}
	for _, r := range runs {
		for _, p := range r.Params {
			if seen[p.Name] < 0 {
				continue
			}
			if seen[p.Name] == 1 {
				p.Required = false
			}
			seen[p.Name] = -1
			spec.Params = append(spec.Params, p)
		}
	}
	return spec
}

// DescribeCalls is every target's CallSpec, sorted by target.
func DescribeCalls() []CallSpec {
	var out []CallSpec
	for _, t := range CallTargets() {
		out = append(out, describe(t, callTable[t].fn))
	}
	return out
}

// CallsMarkdown is docs/calls.md's body: the targets by kind, each with
// its arguments.
func CallsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Domain methods by name (wt_call)\n\n" +
		"The domain libraries' methods, as `wt_call(target, self, args_json, data, nbytes, &result)` runs them\n" +
		"(capi/include/webtensor_domains.h) and every SDK's classes call them: `self` is the object's handle\n" +
		"(0 for a load or a plain function), the arguments one JSON object by name (null or absent: the\n" +
		"default; tensors and objects as handles), the result JSON (a tensor is a new handle the caller owns;\n" +
		"an object handle is freed with its kind's free). Each method's arguments are read from\n" +
		"its code (abi/call_describe.go); an argument it does not take is an error naming the ones it does.\n")
	kind := ""
	for _, s := range DescribeCalls() {
		k, _, _ := strings.Cut(s.Target, ".")
		if k != kind {
			kind = k
			fmt.Fprintf(&b, "\n## %s\n\n%s\n\n| target | arguments | returns |\n|---|---|---|\n", k, callKinds[k])
		}
		var args []string
		for _, p := range s.Params {
			a := fmt.Sprintf("`%s` (%s", p.Name, p.Kind)
			switch {
			case p.Required:
				a += ", required"
			case p.Default != nil && fmt.Sprint(p.Default) != "":
				a += fmt.Sprintf(", default %v", p.Default)
			}
			args = append(args, a+")")
		}
		if s.Data != "" {
			args = append(args, "data: "+s.Data)
		}
		if len(args) == 0 {
			args = []string{"none"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.Target, strings.Join(args, "; "), callTable[s.Target].returns)
	}
	return b.String()
}
