package core

// Hand-written conveniences that core itself relies on. The rest of the
// typed methods are generated from the registry (methods_gen.go).

func call1(name string, a Attrs, in ...*Tensor) *Tensor { return Call1(name, a, in...) }

// Contiguous returns t itself when it is already row-major and dense,
// otherwise a dense copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.err != nil || t.IsContiguous() {
		return t
	}
	return call1("contiguous", nil, t)
}

// Cast converts to another dtype (itself when the dtype already matches).
func (t *Tensor) Cast(d DType) *Tensor {
	if t.err != nil || t.dtype == d {
		return t
	}
	return call1("cast", Attrs{"dtype": d}, t)
}

// Reshape views t with a new shape (copying only when the layout forbids a
// view); one dimension may be -1.
func (t *Tensor) Reshape(shape Shape) *Tensor {
	return call1("reshape", Attrs{"shape": []int(shape)}, t)
}

// Add is elementwise addition with broadcasting.
func (t *Tensor) Add(o *Tensor) *Tensor { return call1("add", nil, t, o) }

// ZerosLike is a tensor of zeros with t's shape, dtype and device.
func ZerosLike(t *Tensor) *Tensor { return call1("zeros_like", nil, t) }

// OnesLike is a tensor of ones with t's shape, dtype and device.
func OnesLike(t *Tensor) *Tensor { return call1("ones_like", nil, t) }

// mergeAttrs folds optional attribute maps of the generated methods into one.
func mergeAttrs(as []Attrs) Attrs {
	switch len(as) {
	case 0:
		return nil
	case 1:
		return as[0]
	}
	out := Attrs{}
	for _, a := range as {
		for k, v := range a {
			out[k] = v
		}
	}
	return out
}
