package core

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/oprules"
)

// The linalg extension's functions made of the factorisations
// (ops_linalg_decomp.go) and other registry ops (Compose): no kernels of
// their own, and their gradients are their parts' (so inv, det, pinv and the
// spectral norms differentiate through _solve, slogdet and svd, with svd's
// caveat for repeated singular values).

// solveShapes is solve's broadcasting (the array API's): a (..., n, n)
// and b either (n,) - one right-hand side for every matrix - or (..., n, k)
// with batch dims that broadcast against a's.
func solveShapes(a, b Shape) (batch Shape, n int, vec bool, err error) {
	da, err := oprules.PlanDecomp(a, true)
	if err != nil {
		return nil, 0, false, fmt.Errorf("x1: %w", err)
	}
	n = da.N
	if len(b) == 1 {
		if b[0] != n {
			return nil, 0, false, fmt.Errorf("x1 holds %d x %d matrices but the vector x2 has %d elements", n, n, b[0])
		}
		return da.Lead, n, true, nil
	}
	if len(b) < 2 || b[len(b)-2] != n {
		return nil, 0, false, fmt.Errorf("x1 of shape %v needs x2 of shape (%d,) or (..., %d, k), got %v", a, n, n, b)
	}
	batch, err = BroadcastShapes(da.Lead, b[:len(b)-2])
	if err != nil {
		return nil, 0, false, fmt.Errorf("batch dims of x1 %v and x2 %v do not broadcast: %w", a, b, err)
	}
	return batch, n, false, nil
}

func expandTo(x *Tensor, shape Shape) *Tensor {
	if x.shape.Equal(shape) {
		return x
	}
	return call1("expand", Attrs{"shape": []int(shape)}, x)
}

func composeSolve(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	a, b := in[0], in[1]
	batch, n, vec, err := solveShapes(a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	if vec {
		b = unsq(b, -1)
	}
	k := b.shape[b.Rank()-1]
	x := call1("_solve", nil, expandTo(a, append(batch.Clone(), n, n)), expandTo(b, append(batch.Clone(), n, k)))
	if vec {
		x = call1("squeeze", Attrs{"axes": []int{-1}}, x)
	}
	return []*Tensor{x}, x.Err()
}

// defaultRtol is the standard's cutoff for pinv and matrix_rank: singular
// values up to max(M, N) * eps times the largest count as zero.
func defaultRtol(a Attrs, d DType, m, n int) float64 {
	if a.Has("rtol") {
		return a.Float("rtol")
	}
	eps := math.Pow(2, -23)
	if d == F64 {
		eps = math.Pow(2, -52)
	}
	return float64(max(m, n)) * eps
}

func svdvalsOf(x *Tensor) *Tensor {
	outs, err := Call("svd", []*Tensor{x}, Attrs{"full_matrices": false})
	if err != nil {
		return errTensor(err)
	}
	return outs[1]
}

// significant is the mask of singular values above rtol times the largest.
func significant(s *Tensor, rtol float64) *Tensor {
	top := call1("max", Attrs{"axes": []int{-1}, "keepdim": true}, s)
	return ew("gt", s, ew("mul", top, Scalar(rtol, s.dtype, s.Device())))
}

func composePinv(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x := in[0]
	d, err := oprules.PlanDecomp(x.shape, false)
	if err != nil {
		return nil, err
	}
	if d.K() == 0 {
		z := Zeros(d.With(d.N, d.M), x.dtype, x.Device())
		return []*Tensor{z}, z.Err()
	}
	outs, err := Call("svd", []*Tensor{x}, Attrs{"full_matrices": false})
	if err != nil {
		return nil, err
	}
	u, s, vh := outs[0], outs[1], outs[2]
	keep := significant(s, defaultRtol(a, x.dtype, d.M, d.N))
	// 1/s only where kept, through a second where, so a dropped zero
	// singular value's 1/0 cannot turn the gradient into NaN.
	one := Scalar(1, s.dtype, s.Device())
	sinv := ew("where", keep, ew("div", one, ew("where", keep, s, one)), Scalar(0, s.dtype, s.Device()))
	p := mm(ew("mul", mT(vh), unsq(sinv, -2)), mT(u))
	return []*Tensor{p}, p.Err()
}

func composeMatrixRank(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x := in[0]
	d, err := oprules.PlanDecomp(x.shape, false)
	if err != nil {
		return nil, err
	}
	if d.K() == 0 {
		z := Zeros(d.Lead, I64, x.Device())
		return []*Tensor{z}, z.Err()
	}
	r := call1("sum", Attrs{"axes": []int{-1}}, significant(svdvalsOf(x), defaultRtol(a, x.dtype, d.M, d.N)))
	return []*Tensor{r}, r.Err()
}

func composeMatrixPower(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x, k := in[0], a.Int("n")
	if _, err := oprules.PlanDecomp(x.shape, true); err != nil {
		return nil, err
	}
	if k < -(1<<62) || k > 1<<62 {
		return nil, fmt.Errorf("n=%d: |n| must be at most 2^62", k)
	}
	if k == 0 {
		y := call1("contiguous", nil, batchEye(x))
		return []*Tensor{y}, y.Err()
	}
	base := x
	if k < 0 {
		base, k = invOf(x), -k
	}
	// Repeated squaring: log2(n) products and at most as many more.
	var acc *Tensor
	for {
		if k&1 == 1 {
			if acc == nil {
				acc = base
			} else {
				acc = mm(acc, base)
			}
		}
		k >>= 1
		if k == 0 {
			break
		}
		base = mm(base, base)
	}
	if acc == x {
		acc = call1("contiguous", nil, call1("expand", Attrs{"shape": []int(x.Shape())}, x)) // n = 1: a copy, not x itself
	}
	return []*Tensor{acc}, acc.Err()
}

var matrixNormOrds = []string{"fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2"}

// composeMatrixNorm: Frobenius through norm, the induced 1 and inf norms as
// the largest (or smallest) column and row sums of |x|, the 2-norm and the
// nuclear norm through the singular values.
func composeMatrixNorm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x, keep := in[0], a.Bool("keepdim")
	d, err := oprules.PlanDecomp(x.shape, false)
	if err != nil {
		return nil, err
	}
	var y *Tensor
	switch ord := a.String("ord"); ord {
	case "fro":
		y = call1("norm", Attrs{"axes": []int{-2, -1}, "keepdim": true}, x)
	case "nuc", "2", "-2":
		op := map[string]string{"nuc": "sum", "2": "max", "-2": "min"}[ord]
		y = unsq(call1(op, Attrs{"axes": []int{-1}, "keepdim": true}, svdvalsOf(x)), -1)
	default: // the induced norms: sums along one axis, the extreme over the other
		along, over := -2, -1 // "1": column sums, largest
		if ord == "inf" || ord == "-inf" {
			along, over = -1, -2
		}
		op := "max"
		if ord[0] == '-' {
			op = "min"
		}
		sums := call1("sum", Attrs{"axes": []int{along}, "keepdim": true}, ew("abs", x))
		y = call1(op, Attrs{"axes": []int{over}, "keepdim": true}, sums)
	}
	if !keep {
		y = y.Reshape(d.Lead)
	}
	return []*Tensor{y}, y.Err()
}

func inferSquareSame(in []Meta, _ Attrs) ([]Meta, error) {
	if _, err := oprules.PlanDecomp(in[0].Shape, true); err != nil {
		return nil, err
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
}

// first is the first output of op on x, for the ops that keep one.
func first(op string, a Attrs) func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	return func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		outs, err := Call(op, in, a)
		if err != nil {
			return nil, err
		}
		return outs[:1], nil
	}
}

func init() {
	rtolAttr := AttrSpec{Name: "rtol", Kind: AttrFloat, Doc: "singular values up to rtol times the largest count as zero; absent means max(M, N) * eps of the dtype"}
	MustRegister(
		&OpDef{
			Name: "solve", Category: "linalg",
			Doc:    "X with x1 X = x2 for square x1 (..., n, n) and x2 (n,) or (..., n, k), batch dims broadcast (the array API's rule).",
			Inputs: []InputSpec{{Name: "x1", DTypes: linalgFloats}, {Name: "x2", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Promote: true, TolScale: 10, Compose: composeSolve,
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				batch, n, vec, err := solveShapes(in[0].Shape, in[1].Shape)
				if err != nil {
					return nil, err
				}
				out := append(batch.Clone(), n)
				if !vec {
					out = append(out, in[1].Shape[len(in[1].Shape)-1])
				}
				return []Meta{{Shape: out, DType: in[0].DType}}, nil
			},
			Samples: []Sample{
				{Name: "matrix", Inputs: []Gen{G(F32, 4, 4), G(F32, 4, 2)}},
				{Name: "vector", Inputs: []Gen{G(F32, 3, 3), G(F32, 3)}},
				{Name: "batched_vector", Inputs: []Gen{G(F32, 2, 3, 3), G(F32, 3)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 2, 1, 3, 3), G(F32, 4, 3, 2)}},
				{Name: "f64_mixed", Inputs: []Gen{G(F64, 3, 3), G(F32, 3, 1)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided(), G(F32, 3, 2).AsStrided()}},
			},
		},
		&OpDef{
			Name: "inv", Category: "linalg", Doc: "Inverse of square matrices (an LU solve against the identity); a singular matrix gives infinities or NaN.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Infer: inferSquareSame, TolScale: 10,
			Compose: func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
				y := invOf(in[0])
				return []*Tensor{y}, y.Err()
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "batched", Inputs: []Gen{G(F32, 2, 3, 3)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5, 5)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided()}},
			},
		},
		&OpDef{
			Name: "det", Category: "linalg", Doc: "Determinant of square matrices: sign * exp(logabsdet) of slogdet.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Infer: inferSlogdet, TolScale: 10,
			Compose: func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
				outs, err := Call("slogdet", in, nil)
				if err != nil {
					return nil, err
				}
				y := ew("mul", outs[0], ew("exp", outs[1]))
				return []*Tensor{y}, y.Err()
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "batched", Inputs: []Gen{G(F32, 3, 2, 2)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5, 5)}},
				{Name: "singular", Inputs: []Gen{GV(F32, []float64{1, 2, 3, 2, 4, 6, 0, 1, 5}, 3, 3)}, NoGrad: true},
				{Name: "empty_matrix", Inputs: []Gen{G(F32, 0, 0)}, NoGrad: true},
			},
		},
		&OpDef{
			Name: "eigvalsh", Category: "linalg", Doc: "Eigenvalues (ascending) of symmetric matrices, read from the lower triangle.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				m, err := inferEigh(in, a)
				if err != nil {
					return nil, err
				}
				return m[:1], nil
			},
			TolScale: 10, Compose: first("eigh", nil),
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 3, 3)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided()}},
			},
		},
		&OpDef{
			Name: "svdvals", Category: "linalg", Doc: "Singular values (descending) of matrices.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				m, err := inferSVD(in, Attrs{"full_matrices": false})
				if err != nil {
					return nil, err
				}
				return m[1:2], nil
			},
			TolScale: 10,
			Compose: func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
				s := svdvalsOf(in[0])
				return []*Tensor{s}, s.Err()
			},
			Samples: []Sample{
				{Name: "tall", Inputs: []Gen{G(F32, 5, 3)}},
				{Name: "wide_f64", Inputs: []Gen{G(F64, 2, 3, 4)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided()}},
			},
		},
		&OpDef{
			Name: "pinv", Category: "linalg", Doc: "Moore-Penrose pseudo-inverse (..., N, M) of (..., M, N) matrices, through the SVD.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{rtolAttr}, TolScale: 10, Compose: composePinv,
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				d, err := oprules.PlanDecomp(in[0].Shape, false)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: d.With(d.N, d.M), DType: in[0].DType}}, nil
			},
			Samples: []Sample{
				{Name: "wide", Inputs: []Gen{G(F32, 3, 4)}},
				{Name: "tall", Inputs: []Gen{G(F32, 5, 3)}},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 3, 3)}},
				{Name: "rank_deficient", Inputs: []Gen{GV(F32, []float64{1, 2, 2, 4, 3, 6}, 3, 2)}, Attrs: Attrs{"rtol": 1e-4}, NoGrad: true},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, NoGrad: true},
			},
		},
		&OpDef{
			Name: "matrix_rank", Category: "linalg", Doc: "Rank of matrices (i64): the singular values above rtol times the largest.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats, NoGrad: true}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{rtolAttr}, Compose: composeMatrixRank,
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				d, err := oprules.PlanDecomp(in[0].Shape, false)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: d.Lead.Clone(), DType: I64}}, nil
			},
			Samples: []Sample{
				{Name: "full", Inputs: []Gen{G(F32, 3, 4)}},
				{Name: "deficient", Inputs: []Gen{GV(F32, []float64{1, 2, 3, 2, 4, 6, 1, 0, 1}, 3, 3)}, Attrs: Attrs{"rtol": 1e-4}},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 4, 3)}},
				{Name: "empty", Inputs: []Gen{G(F32, 2, 0, 3)}},
			},
		},
		&OpDef{
			Name: "matrix_power", Category: "linalg", Doc: "Square matrices raised to an integer power n by repeated squaring; n < 0 powers the inverse, n = 0 gives the identity.",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{{Name: "n", Kind: AttrInt, Required: true, Doc: "the exponent"}},
			Infer: inferSquareSame, TolScale: 10, Compose: composeMatrixPower,
			Samples: []Sample{
				{Name: "cube", Inputs: []Gen{G(F32, 4, 4)}, Attrs: Attrs{"n": 3}},
				{Name: "zero", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"n": 0}, NoGrad: true}, // a constant
				{Name: "one", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"n": 1}},
				{Name: "inverse_square", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"n": -2}},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 3, 3)}, Attrs: Attrs{"n": 5}},
			},
		},
		&OpDef{
			Name: "matrix_norm", Category: "linalg",
			Doc:    "Matrix norms over the last two dims: fro (default), nuc, 2 and -2 (largest, smallest singular value), 1 and -1 (column sums), inf and -inf (row sums).",
			Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{
				{Name: "ord", Kind: AttrString, Default: "fro", Enum: matrixNormOrds, Doc: "which norm"},
				{Name: "keepdim", Kind: AttrBool, Default: false, Doc: "keep the two reduced axes as size 1"},
			},
			TolScale: 10, Compose: composeMatrixNorm,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				d, err := oprules.PlanDecomp(in[0].Shape, false)
				if err != nil {
					return nil, err
				}
				out := d.Lead.Clone()
				if a.Bool("keepdim") {
					out = d.With(1, 1)
				}
				return []Meta{{Shape: out, DType: in[0].DType}}, nil
			},
			Samples: []Sample{
				{Name: "fro", Inputs: []Gen{G(F32, 3, 4)}},
				{Name: "nuc", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"ord": "nuc"}},
				{Name: "two", Inputs: []Gen{G(F32, 4, 3)}, Attrs: Attrs{"ord": "2"}},
				{Name: "minus_two", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"ord": "-2"}},
				{Name: "one", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"ord": "1"}},
				{Name: "minus_one", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"ord": "-1"}},
				{Name: "inf_keepdim", Inputs: []Gen{G(F64, 2, 3, 4)}, Attrs: Attrs{"ord": "inf", "keepdim": true}},
				{Name: "minus_inf_strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}, Attrs: Attrs{"ord": "-inf"}},
			},
		},
	)
}
