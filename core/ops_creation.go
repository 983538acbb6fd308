package core

// Creation ops: no tensor inputs (or only a template for *_like); the device
// comes from the "device" attribute, else the default device.

func creationAttrs(extra ...AttrSpec) []AttrSpec {
	return append([]AttrSpec{
		{Name: "shape", Kind: AttrInts, Required: true, Doc: "shape of the result"},
		{Name: "dtype", Kind: AttrDType, Default: F32, Doc: "element type"},
		{Name: "device", Kind: AttrString, Default: "", Doc: "device; empty means the default device"},
	}, extra...)
}

func inferCreation(in []Meta, a Attrs) ([]Meta, error) {
	s := Shape(a.Ints("shape"))
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return []Meta{{Shape: s.Clone(), DType: a.DType("dtype")}}, nil
}

func likeAttrs(extra ...AttrSpec) []AttrSpec {
	return append([]AttrSpec{{Name: "dtype", Kind: AttrDType, Doc: "element type; absent keeps the template's"}}, extra...)
}

func inferLike(in []Meta, a Attrs) ([]Meta, error) {
	d := in[0].DType
	if a.Has("dtype") {
		d = a.DType("dtype")
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: d}}, nil
}

func init() {
	MustRegister(
		&OpDef{Name: "zeros", Category: "creation", Doc: "Tensor filled with 0.", Attrs: creationAttrs(), Infer: inferCreation,
			Samples: []Sample{{Name: "f32", Attrs: Attrs{"shape": []int{2, 3}}}, {Name: "i64", Attrs: Attrs{"shape": []int{4}, "dtype": I64}}}},
		&OpDef{Name: "ones", Category: "creation", Doc: "Tensor filled with 1.", Attrs: creationAttrs(), Infer: inferCreation,
			Samples: []Sample{{Name: "f32", Attrs: Attrs{"shape": []int{2, 3}}}, {Name: "bool", Attrs: Attrs{"shape": []int{3}, "dtype": Bool}}}},
		&OpDef{Name: "full", Category: "creation", Doc: "Tensor filled with value.",
			Attrs: creationAttrs(AttrSpec{Name: "value", Kind: AttrFloat, Required: true, Doc: "fill value"}), Infer: inferCreation,
			Samples: []Sample{{Name: "f32", Attrs: Attrs{"shape": []int{2, 2}, "value": 2.5}}, {Name: "i32", Attrs: Attrs{"shape": []int{3}, "value": -7, "dtype": I32}}}},
		&OpDef{Name: "zeros_like", Category: "creation", Doc: "Zeros with the shape (and dtype) of x.",
			Inputs: []InputSpec{{Name: "x", NoGrad: true}}, Attrs: likeAttrs(), Infer: inferLike,
			Samples: []Sample{{Name: "f32", Inputs: []Gen{G(F32, 2, 3)}}}},
		&OpDef{Name: "ones_like", Category: "creation", Doc: "Ones with the shape (and dtype) of x.",
			Inputs: []InputSpec{{Name: "x", NoGrad: true}}, Attrs: likeAttrs(), Infer: inferLike,
			Samples: []Sample{{Name: "f32", Inputs: []Gen{G(F32, 2, 3)}}, {Name: "to_i32", Inputs: []Gen{G(F32, 3)}, Attrs: Attrs{"dtype": I32}}}},
		&OpDef{Name: "full_like", Category: "creation", Doc: "value with the shape (and dtype) of x.",
			Inputs: []InputSpec{{Name: "x", NoGrad: true}},
			Attrs:  likeAttrs(AttrSpec{Name: "value", Kind: AttrFloat, Required: true, Doc: "fill value"}), Infer: inferLike,
			Samples: []Sample{{Name: "f32", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"value": -1.5}}}},
	)
}

// Zeros makes a zero tensor on the default device (or dev).
func Zeros(shape Shape, d DType, dev ...Device) *Tensor {
	return call1("zeros", Attrs{"shape": []int(shape), "dtype": d, "device": devAttr(dev)})
}

// Ones makes a tensor of ones on the default device (or dev).
func Ones(shape Shape, d DType, dev ...Device) *Tensor {
	return call1("ones", Attrs{"shape": []int(shape), "dtype": d, "device": devAttr(dev)})
}

// Full makes a tensor filled with v on the default device (or dev).
func Full(shape Shape, v float64, d DType, dev ...Device) *Tensor {
	return call1("full", Attrs{"shape": []int(shape), "value": v, "dtype": d, "device": devAttr(dev)})
}

func devAttr(dev []Device) string {
	if len(dev) == 0 {
		return ""
	}
	return dev[0].String()
}
