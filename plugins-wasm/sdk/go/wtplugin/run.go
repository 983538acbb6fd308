package wtplugin

import "fmt"

// Run executes the registered op name the way the host does, for native
// tests of a plugin's kernels: attribute defaults are filled in, outputs are
// allocated zeroed by the manifest's shape and dtype rules (asking Infer for
// "infer"), and the kernel's error or panic comes back as an error.
func Run(name string, attrs Attrs, inputs ...Tensor) ([]Tensor, error) {
	op, err := lookup(name)
	if err != nil {
		return nil, err
	}
	spec := ops[op].op
	if len(inputs) != len(spec.Inputs) {
		return nil, fmt.Errorf("%s: takes %d inputs, got %d", name, len(spec.Inputs), len(inputs))
	}
	for i, in := range inputs {
		if err := acceptDType(spec.Inputs[i], in.DType); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	metas, err := outputMetas(spec, attrs, inputs)
	if err != nil {
		return nil, err
	}
	c := &Call{Inputs: inputs, Attrs: attrs, Outputs: make([]Tensor, len(metas))}
	for i, m := range metas {
		dt, err := ParseDType(m.DType)
		if err != nil {
			return nil, fmt.Errorf("%s, output %d: %v", name, i, err)
		}
		c.Outputs[i] = Zeros(dt, m.Shape)
	}
	if err := runKernel(op, c); err != nil {
		return nil, err
	}
	return c.Outputs, nil
}

func acceptDType(in Input, dt DType) error {
	if in.DTypes == nil {
		return nil
	}
	for _, name := range in.DTypes {
		if name == dt.String() {
			return nil
		}
	}
	return fmt.Errorf("input %s takes %v, got %s", in.Name, in.DTypes, dt)
}

// outputMetas applies the manifest's output rules, as the host does.
func outputMetas(spec Op, attrs Attrs, inputs []Tensor) ([]Meta, error) {
	in := make([]Meta, len(inputs))
	for i, t := range inputs {
		in[i] = Meta{Shape: t.Shape, DType: t.DType.String()}
	}
	out := make([]Meta, len(spec.Outputs))
	for i, o := range spec.Outputs {
		switch o.Shape {
		case "infer": // Infer answers for every output at once
			return callInfer(spec, in, attrs)
		case "broadcast":
			s, err := broadcast(in)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", spec.Name, err)
			}
			out[i].Shape = s
		default:
			j, err := inputRef(o.Shape, len(in))
			if err != nil {
				return nil, err
			}
			out[i].Shape = append([]int{}, in[j].Shape...)
		}
		out[i].DType = o.DType
		if j, err := inputRef(o.DType, len(in)); err == nil {
			out[i].DType = in[j].DType
		}
	}
	return out, nil
}

// broadcast is NumPy's rule: align trailing dims; each pair is equal or 1.
func broadcast(in []Meta) ([]int, error) {
	rank := 0
	for _, m := range in {
		rank = max(rank, len(m.Shape))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, m := range in {
		off := rank - len(m.Shape)
		for d, n := range m.Shape {
			switch {
			case out[off+d] == 1:
				out[off+d] = n
			case n != 1 && n != out[off+d]:
				return nil, fmt.Errorf("shapes do not broadcast: %v", shapes(in))
			}
		}
	}
	return out, nil
}

func shapes(in []Meta) [][]int {
	s := make([][]int, len(in))
	for i, m := range in {
		s[i] = m.Shape
	}
	return s
}
