package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/webtensor/webtensor/core"
)

// InputSpec describes one sample input in a vector file.
type InputSpec struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Strided bool   `json:"strided,omitempty"`
	Absent  bool   `json:"absent,omitempty"`
	Grad    bool   `json:"grad,omitempty"` // the reference computes this input's gradient
	// Complex marks a complex input: the file holds its real pairs (DType
	// and Shape are theirs, shape ending in 2) and a runner passes the op
	// view_as_complex of them (gradients are the pairs', PyTorch's rule).
	Complex bool `json:"complex,omitempty"`
}

// OutputSpec is the dtype and shape Go's Infer gives an output; Shape is nil
// for ops whose output shape depends on values.
type OutputSpec struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	// Complex marks a complex output, compared (and differentiated) as
	// view_as_real of it: DType and Shape are the pairs'.
	Complex bool `json:"complex,omitempty"`
}

// OutputSpecOf describes an output as the vector files hold it: a complex
// output as its real pairs.
func OutputSpecOf(o *core.Tensor, dynamic bool) OutputSpec {
	d, shape := o.DType(), o.Shape()
	out := OutputSpec{DType: d.RealDType().String(), Complex: d.IsComplex()}
	if !dynamic {
		if out.Complex {
			shape = append(shape, 2)
		}
		out.Shape = append([]int{}, shape...)
	}
	return out
}

// CaseSpec is one sample case of an op as the Python generator reads it.
type CaseSpec struct {
	Name    string         `json:"name"`
	Attrs   map[string]any `json:"attrs"`
	Inputs  []InputSpec    `json:"inputs"`
	Outputs []OutputSpec   `json:"outputs,omitempty"`
	Grad    bool           `json:"grad"`
}

// TensorName names a tensor of a case in a vector file: kind is "in", "out",
// "up" (the upstream gradient of an output) or "grad" (of an input).
func TensorName(c, kind string, i int) string { return fmt.Sprintf("%s/%s%d", c, kind, i) }

// JSONAttrs converts attributes to JSON-safe values: dtypes by name and
// non-finite floats as "inf", "-inf", "nan".
func JSONAttrs(a core.Attrs) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		switch x := v.(type) {
		case core.DType:
			out[k] = x.String()
		case float64:
			out[k] = jsonFloat(x)
		case []float64:
			l := make([]any, len(x))
			for i, f := range x {
				l[i] = jsonFloat(f)
			}
			out[k] = l
		default:
			out[k] = v
		}
	}
	return out
}

func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return f
}

// gradInputs says which inputs of a sample are differentiated.
func gradInputs(def *core.OpDef, s core.Sample) ([]bool, bool) {
	flags := make([]bool, len(s.Inputs))
	if !def.Differentiable() || s.NoGrad {
		return flags, false
	}
	any := false
	for i, g := range s.Inputs {
		spec := def.Inputs[min(i, len(def.Inputs)-1)]
		if g.Absent || spec.NoGrad || !g.DType.IsInexact() {
			continue
		}
		if p := g.DType.RealDType(); p != core.F32 && p != core.F64 {
			// Half-precision gradients round differently in every framework;
			// their forward results are still checked.
			return make([]bool, len(s.Inputs)), false
		}
		flags[i], any = true, true
	}
	return flags, any
}

// SpecOf describes a sample without its outputs.
func SpecOf(def *core.OpDef, s core.Sample) CaseSpec {
	flags, grad := gradInputs(def, s)
	c := CaseSpec{Name: s.Name, Attrs: JSONAttrs(s.ResolvedAttrs(def)), Inputs: []InputSpec{}, Grad: grad}
	for i, g := range s.Inputs {
		shape := []int(g.Shape)
		if shape == nil {
			shape = []int{}
		}
		in := InputSpec{DType: g.DType.String(), Shape: shape, Strided: g.Strided, Absent: g.Absent, Grad: flags[i]}
		if g.DType.IsComplex() {
			in.DType, in.Shape, in.Complex = g.DType.RealDType().String(), append(slices.Clone(shape), 2), true
		}
		c.Inputs = append(c.Inputs, in)
	}
	return c
}

// Key fingerprints an op's samples (inputs, attributes, gradient flags and
// the input values' generator) so stale vector files are detected.
func Key(def *core.OpDef) string {
	specs := make([]CaseSpec, len(def.Samples))
	for i, s := range def.Samples {
		specs[i] = SpecOf(def, s)
	}
	b, err := json.Marshal(struct {
		V     int
		Cases []CaseSpec
		Gens  [][]core.Gen
	}{V: 1, Cases: specs, Gens: gens(def)})
	if err != nil {
		// Sample values with NaN or infinities, which JSON cannot hold
		// (the key was the hash of nothing, so stale vectors of those ops
		// went unnoticed): written as jsonFloat writes attributes. Other
		// ops keep the keys their vector files carry.
		b, err = json.Marshal(struct {
			V     int
			Cases []CaseSpec
			Gens  [][]finiteGen
		}{V: 1, Cases: specs, Gens: finiteGens(def)})
	}
	if err != nil {
		panic(fmt.Sprintf("conformance: key of %s: %v", def.Name, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// finiteGen is a core.Gen whose bounds and values JSON can hold.
type finiteGen struct {
	core.Gen
	Lo, Hi any
	Values []any
}

func finiteGens(def *core.OpDef) [][]finiteGen {
	out := make([][]finiteGen, len(def.Samples))
	for i, s := range def.Samples {
		for _, g := range s.Inputs {
			f := finiteGen{Gen: g, Lo: jsonFloat(g.Lo), Hi: jsonFloat(g.Hi)}
			if g.Values != nil {
				f.Values = make([]any, len(g.Values))
				for j, v := range g.Values {
					f.Values[j] = jsonFloat(v)
				}
			}
			out[i] = append(out[i], f)
		}
	}
	return out
}

func gens(def *core.OpDef) [][]core.Gen {
	out := make([][]core.Gen, len(def.Samples))
	for i, s := range def.Samples {
		out[i] = s.Inputs
	}
	return out
}

// OpsWithSamples lists the ops that have sample cases, sorted.
func OpsWithSamples() []*core.OpDef {
	var out []*core.OpDef
	for _, d := range core.Ops() {
		if len(d.Samples) > 0 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CallInputs is what an op gets from the tensors a runner built from a
// case's files: a complex input is view_as_complex of its pairs (whose
// gradients the files hold), the others are themselves.
func CallInputs(c CaseSpec, built []*core.Tensor) []*core.Tensor {
	ins := make([]*core.Tensor, len(built))
	for i, t := range built {
		ins[i] = t
		if t != nil && i < len(c.Inputs) && c.Inputs[i].Complex {
			ins[i] = t.ViewAsComplex()
		}
	}
	return ins
}

// FiledOutputs is an op's outputs as the vector files hold them: a complex
// output as its real pairs.
func FiledOutputs(c CaseSpec, outs []*core.Tensor) []*core.Tensor {
	filed := make([]*core.Tensor, len(outs))
	for j, o := range outs {
		filed[j] = o
		if j < len(c.Outputs) && c.Outputs[j].Complex {
			filed[j] = o.ViewAsReal()
		}
	}
	return filed
}
