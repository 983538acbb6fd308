package core

// Helpers for declaring ops: common inference rules and sample builders.

// Tensor-input dtype sets used by InputSpec.DTypes.
var (
	floatsOnly = FloatDTypes
	intIndex   = []DType{I64, I32, U32, I16, I8, U8, U16, U64}
	numeric    = []DType{F32, F16, BF16, F64, I64, I32, U32, I16, I8, U8, U16, U64}
)

// InferSame gives one output with the shape and dtype of input 0.
func InferSame(in []Meta, _ Attrs) ([]Meta, error) {
	return []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
}

// InferBroadcast gives one output with the broadcast shape of all present
// inputs and the dtype of input 0 (inputs were promoted already).
func InferBroadcast(in []Meta, _ Attrs) ([]Meta, error) {
	r := new(inferred)
	if ok, err := r.broadcast(in); ok {
		if err != nil {
			return nil, err
		}
		return r.meta[:], nil
	}
	var shapes []Shape
	for _, m := range in {
		if m.DType != Invalid {
			shapes = append(shapes, m.Shape)
		}
	}
	s, err := BroadcastShapes(shapes...)
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: s, DType: in[0].DType}}, nil
}

// InferBroadcastBool is InferBroadcast with a bool output (comparisons).
func InferBroadcastBool(in []Meta, a Attrs) ([]Meta, error) {
	m, err := InferBroadcast(in, a)
	if err != nil {
		return nil, err
	}
	m[0].DType = Bool
	return m, nil
}

// G builds a sample input: shape and dtype, randn values.
func G(d DType, shape ...int) Gen { return Gen{Shape: Shape(shape), DType: d, Kind: "randn"} }

// GU builds a uniform sample input in [lo, hi).
func GU(d DType, lo, hi float64, shape ...int) Gen {
	return Gen{Shape: Shape(shape), DType: d, Kind: "uniform", Lo: lo, Hi: hi}
}

// GI builds an integer sample input in [lo, hi).
func GI(d DType, lo, hi int, shape ...int) Gen {
	return Gen{Shape: Shape(shape), DType: d, Kind: "int", Lo: float64(lo), Hi: float64(hi)}
}

// GV builds a sample input from explicit values.
func GV(d DType, vals []float64, shape ...int) Gen {
	return Gen{Shape: Shape(shape), DType: d, Kind: "values", Values: vals}
}

// Kind returns a copy of g with another value kind.
func (g Gen) WithKind(kind string) Gen { g.Kind = kind; return g }

// Strided returns a copy of g that is given to the op as a non-contiguous view.
func (g Gen) AsStrided() Gen { g.Strided = true; return g }
