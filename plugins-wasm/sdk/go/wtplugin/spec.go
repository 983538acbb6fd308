package wtplugin

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Op declares one op; it is written into the manifest as ABI.md describes.
type Op struct {
	Name    string   `json:"name"` // "<plugin>.<op>"
	Doc     string   `json:"doc"`
	Inputs  []Input  `json:"inputs"`
	Attrs   []Attr   `json:"attrs,omitempty"`
	Outputs []Output `json:"outputs"`
	// Backward maps each differentiable input to an expression over registry
	// ops, e.g. {"x": "mul(grad, y)"}; without it the op has no gradient.
	Backward map[string]string `json:"backward,omitempty"`
	WGSL     string            `json:"wgsl,omitempty"` // optional GPU kernel source
	// Infer gives the output shapes when an output's shape rule is "infer".
	Infer InferFunc `json:"-"`
}

// Input declares a tensor input; DTypes nil accepts every dtype.
type Input struct {
	Name   string   `json:"name"`
	DTypes []string `json:"dtypes,omitempty"`
}

// Attr declares an attribute. Kind is one of int float bool string ints
// floats dtype; the host fills Default in when a caller leaves it out.
type Attr struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default any    `json:"default"`
	Doc     string `json:"doc,omitempty"`
}

// Output declares an output. Shape is "input:N", "broadcast" or "infer";
// DType is "input:N" or a dtype name.
type Output struct {
	Name  string `json:"name"`
	Shape string `json:"shape"`
	DType string `json:"dtype"`
}

// Kernel computes an op's outputs, already allocated and zeroed, from its
// inputs. A returned error (or a panic) fails the call with its message.
type Kernel func(c *Call) error

// Meta is what shape inference sees of a tensor.
type Meta struct {
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
}

// InferFunc returns the shape and dtype of every output.
type InferFunc func(inputs []Meta, attrs Attrs) ([]Meta, error)

type registered struct {
	op     Op
	kernel Kernel
}

var (
	pluginName    string
	pluginVersion = "0.0.0"
	ops           []registered
	manifestJSON  []byte // built once; kept alive for the host to read
)

// Plugin names the plugin (the prefix of its op names) and its version.
// Call it from init before Register.
func Plugin(name, version string) {
	pluginName, pluginVersion = name, version
}

// Register adds an op and its kernel. A malformed declaration is a
// programming error, so Register panics: in the plugin's native tests, which
// run the same init, the message points at the mistake before any host does.
func Register(op Op, kernel Kernel) {
	if err := check(op, kernel); err != nil {
		panic("wtplugin.Register: " + err.Error())
	}
	ops = append(ops, registered{op, kernel})
	manifestJSON = nil
}

func check(op Op, kernel Kernel) error {
	if pluginName == "" {
		return fmt.Errorf("%s: call wtplugin.Plugin(name, version) first", op.Name)
	}
	if !strings.HasPrefix(op.Name, pluginName+".") || len(op.Name) == len(pluginName)+1 {
		return fmt.Errorf("op %q: names are %q followed by the op", op.Name, pluginName+".")
	}
	if op.Doc == "" {
		return fmt.Errorf("%s: missing doc line", op.Name)
	}
	if kernel == nil {
		return fmt.Errorf("%s: nil kernel", op.Name)
	}
	for _, r := range ops {
		if r.op.Name == op.Name {
			return fmt.Errorf("%s: registered twice", op.Name)
		}
	}
	for _, in := range op.Inputs {
		for _, dt := range in.DTypes {
			if _, err := ParseDType(dt); err != nil {
				return fmt.Errorf("%s, input %s: %v", op.Name, in.Name, err)
			}
		}
	}
	if len(op.Outputs) == 0 {
		return fmt.Errorf("%s: no outputs", op.Name)
	}
	for _, o := range op.Outputs {
		if err := checkOutput(op, o); err != nil {
			return fmt.Errorf("%s, output %s: %v", op.Name, o.Name, err)
		}
	}
	return nil
}

func checkOutput(op Op, o Output) error {
	switch {
	case o.Shape == "infer":
		if op.Infer == nil {
			return fmt.Errorf(`shape rule "infer" needs Op.Infer`)
		}
	case o.Shape == "broadcast":
	default:
		if _, err := inputRef(o.Shape, len(op.Inputs)); err != nil {
			return fmt.Errorf("shape: %v", err)
		}
	}
	if _, err := ParseDType(o.DType); err != nil {
		if _, err2 := inputRef(o.DType, len(op.Inputs)); err2 != nil {
			return fmt.Errorf(`dtype %q is neither a dtype nor "input:N"`, o.DType)
		}
	}
	return nil
}

// inputRef parses "input:N" against an op with n inputs.
func inputRef(rule string, n int) (int, error) {
	idx, ok := strings.CutPrefix(rule, "input:")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i < 0 || i >= n {
		return 0, fmt.Errorf(`rule %q: want "input:N" with N < %d, "broadcast" or "infer"`, rule, n)
	}
	return i, nil
}

// Manifest is the plugin's manifest as the host reads it.
func Manifest() []byte {
	if manifestJSON == nil {
		list := make([]Op, len(ops))
		for i, r := range ops {
			list[i] = r.op
		}
		specs := make([]PolicySpec, len(policies))
		for i, p := range policies {
			specs[i] = p.spec
		}
		m := struct {
			ABI      int          `json:"abi"`
			Name     string       `json:"name"`
			Version  string       `json:"version"`
			Ops      []Op         `json:"ops"`
			Policies []PolicySpec `json:"policies,omitempty"`
		}{1, pluginName, pluginVersion, list, specs}
		b, err := json.Marshal(m)
		if err != nil { // only an attribute default JSON cannot encode
			panic("wtplugin: manifest: " + err.Error())
		}
		manifestJSON = b
	}
	return manifestJSON
}

func lookup(name string) (int, error) {
	for i, r := range ops {
		if r.op.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: no such op in plugin %q", name, pluginName)
}
