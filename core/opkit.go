package core

import "github.com/webtensor/webtensor/core/oprules"

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
	var buf [4]Shape // on the stack for the usual one to four inputs
	shapes := buf[:0]
	for _, m := range in {
		if m.DType != Invalid {
			shapes = append(shapes, m.Shape)
		}
	}
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	if rank > 4 {
		s, err := BroadcastShapes(shapes...)
		if err != nil {
			return nil, err
		}
		return []Meta{{Shape: s, DType: in[0].DType}}, nil
	}
	// The result and its dims in one allocation: every elementwise op
	// infers through here, so this is on the per-op hot path.
	r := new(struct {
		meta [1]Meta
		dims [4]int
	})
	if err := oprules.BroadcastInto(r.dims[:rank:rank], shapes); err != nil {
		return nil, err
	}
	r.meta[0] = Meta{Shape: r.dims[:rank:rank], DType: in[0].DType}
	return r.meta[:], nil
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
