package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// The matrix factorisations of the array API's linalg extension, the ops
// with kernels of their own: cholesky, qr (Householder), eigh (cyclic
// Jacobi), svd (one-sided Jacobi), slogdet and _solve (LU with partial
// pivoting). Everything else of the extension is composed of these and
// the other registry ops (ops_linalg_composed.go); their gradients are
// PyTorch's formulas (ops_linalg_decomp_grad.go).
//
// Conventions the standard leaves open, fixed so that every backend gives
// the same answer and the reference vectors can hold PyTorch to it:
//   - cholesky and eigh read the lower triangle only (LAPACK's 'L', as
//     PyTorch and NumPy do), so their gradient is that of the lower
//     triangle: an element above the diagonal has none.
//   - qr follows LAPACK's Householder convention (geqrf/orgqr): R's
//     diagonal is -sign(a) * |column| (a reflector of a column already
//     zero below the diagonal is the identity), which is what PyTorch and
//     NumPy return, element for element.
//   - eigh's eigenvalues ascend and svd's singular values descend; each
//     eigenvector, and each left singular vector (its right one flipped
//     with it), has its largest-magnitude element (the first of equal
//     ones) positive. A full SVD's extra columns of U (rows of Vh) are the
//     complement built from unit vectors by pivoted Gram-Schmidt: each
//     next column is the unit vector with the largest residual, projected.
//     The reference applies the same normalisation to PyTorch's result.
//   - no op raises on a singular or indefinite matrix (that would need the
//     device to report back): singular matrices give infinities or NaN,
//     cholesky of a matrix that is not positive definite gives NaN, and
//     slogdet gives sign 0 and logabsdet -inf.

// linalgFloats is what the factorisations take, as PyTorch's linalg does
// on the CPU: f32 and f64.
var linalgFloats = []DType{F32, F64}

func planDecomp(in Meta, square bool) (oprules.Decomp, error) {
	return oprules.PlanDecomp(in.Shape, square)
}

func inferCholesky(in []Meta, _ Attrs) ([]Meta, error) {
	if _, err := planDecomp(in[0], true); err != nil {
		return nil, err
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
}

func inferQR(in []Meta, a Attrs) ([]Meta, error) {
	d, err := planDecomp(in[0], false)
	if err != nil {
		return nil, err
	}
	q, r := d.QRShapes(a.String("mode") == "complete")
	return []Meta{{Shape: q, DType: in[0].DType}, {Shape: r, DType: in[0].DType}}, nil
}

func inferEigh(in []Meta, _ Attrs) ([]Meta, error) {
	d, err := planDecomp(in[0], true)
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: d.With(d.N), DType: in[0].DType}, {Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
}

func inferSVD(in []Meta, a Attrs) ([]Meta, error) {
	d, err := planDecomp(in[0], false)
	if err != nil {
		return nil, err
	}
	u, s, vh := d.SVDShapes(a.Bool("full_matrices"))
	dt := in[0].DType
	return []Meta{{Shape: u, DType: dt}, {Shape: s, DType: dt}, {Shape: vh, DType: dt}}, nil
}

func inferSlogdet(in []Meta, _ Attrs) ([]Meta, error) {
	d, err := planDecomp(in[0], true)
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: d.Lead.Clone(), DType: in[0].DType}, {Shape: d.Lead.Clone(), DType: in[0].DType}}, nil
}

// inferSolve is _solve's contract: a (..., n, n) and b (..., n, k) with the
// same batch dims (solve broadcasts them before it calls _solve).
func inferSolve(in []Meta, _ Attrs) ([]Meta, error) {
	da, err := planDecomp(in[0], true)
	if err != nil {
		return nil, fmt.Errorf("a: %w", err)
	}
	db, err := planDecomp(in[1], false)
	if err != nil {
		return nil, fmt.Errorf("b: %w", err)
	}
	if !da.Lead.Equal(db.Lead) || db.M != da.N {
		return nil, fmt.Errorf("a of shape %v needs b of shape %v + (%d, k), the same batch dims, got %v", in[0].Shape, da.Lead, da.N, in[1].Shape)
	}
	if in[0].DType != in[1].DType {
		return nil, fmt.Errorf("a is %v but b is %v", in[0].DType, in[1].DType)
	}
	return []Meta{{Shape: in[1].Shape.Clone(), DType: in[1].DType}}, nil
}

// decompDef is a factorisation of one matrix x, f32 or f64, what every op
// of this file but _solve is: its outputs, attributes, rules and samples,
// and its results held to tolScale times the dtype's tolerance (a
// factorisation accumulates rounding).
func decompDef(name, doc string, outputs []string, attrs []AttrSpec, infer func([]Meta, Attrs) ([]Meta, error),
	bw func(*GradCtx) ([]*Tensor, error), tolScale float64, samples []Sample) *OpDef {
	return &OpDef{
		Name: name, Category: "linalg", Doc: doc,
		Inputs: []InputSpec{{Name: "x", DTypes: linalgFloats}}, Outputs: outputs, Attrs: attrs,
		Infer: infer, Backward: bw, TolScale: tolScale, Samples: samples,
	}
}

func init() {
	spd := func(d DType, shape ...int) Gen { return G(d, shape...).WithKind("spd") }
	MustRegister(
		decompDef("cholesky",
			"Cholesky factor of symmetric positive definite matrices (reads the lower triangle): L with A = L Lᵀ, or U = Lᵀ when upper.",
			[]string{"y"}, []AttrSpec{{Name: "upper", Kind: AttrBool, Default: false, Doc: "return the upper factor U (A = Uᵀ U) instead of L"}},
			inferCholesky, choleskyBackward, 4,
			[]Sample{
				{Name: "typical", Inputs: []Gen{spd(F32, 4, 4)}},
				{Name: "batched_upper", Inputs: []Gen{spd(F32, 2, 3, 3)}, Attrs: Attrs{"upper": true}},
				{Name: "f64", Inputs: []Gen{spd(F64, 5, 5)}},
				{Name: "strided", Inputs: []Gen{spd(F32, 3, 3).AsStrided()}},
				{Name: "one", Inputs: []Gen{spd(F32, 1, 1)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3, 3)}, NoGrad: true},
			}),
		decompDef("qr",
			"QR factorisation by Householder reflections (LAPACK's signs): Q with orthonormal columns and upper-triangular R, A = Q R.",
			[]string{"q", "r"}, []AttrSpec{{Name: "mode", Kind: AttrString, Default: "reduced", Enum: []string{"reduced", "complete"},
				Doc: "reduced: Q is M x K, R K x N (K = min(M, N)); complete: Q is M x M, R M x N"}},
			inferQR, qrBackward, 10,
			[]Sample{
				{Name: "square", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "tall", Inputs: []Gen{G(F32, 5, 3)}},
				{Name: "wide", Inputs: []Gen{G(F32, 3, 5)}},
				// A complete factorisation of a tall matrix has columns of Q
				// that A does not determine: no derivative (as in PyTorch).
				{Name: "tall_complete", Inputs: []Gen{G(F32, 5, 3)}, Attrs: Attrs{"mode": "complete"}, NoGrad: true},
				{Name: "wide_complete", Inputs: []Gen{G(F32, 2, 4)}, Attrs: Attrs{"mode": "complete"}},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 4, 3)}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3, 2)}, NoGrad: true},
			}),
		decompDef("eigh",
			"Eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric matrices, read from the lower triangle.",
			[]string{"eigenvalues", "eigenvectors"}, nil,
			inferEigh, eighBackward, 10,
			[]Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "batched", Inputs: []Gen{G(F32, 2, 3, 3)}},
				{Name: "f64", Inputs: []Gen{G(F64, 6, 6)}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 4).AsStrided()}},
				{Name: "one", Inputs: []Gen{G(F32, 1, 1)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 2, 2)}, NoGrad: true},
			}),
		decompDef("svd",
			"Singular value decomposition A = U diag(S) Vh by one-sided Jacobi: S descending, U and Vh with orthonormal columns and rows.",
			[]string{"u", "s", "vh"}, []AttrSpec{{Name: "full_matrices", Kind: AttrBool, Default: true,
				Doc: "U M x M and Vh N x N (true), or M x K and K x N with K = min(M, N)"}},
			inferSVD, svdBackward, 10,
			[]Sample{
				{Name: "square", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "tall_reduced", Inputs: []Gen{G(F32, 5, 3)}, Attrs: Attrs{"full_matrices": false}},
				{Name: "wide_reduced", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"full_matrices": false}},
				// The extra columns of a full U (rows of Vh) span what A does
				// not determine: their gradient is ignored, as in PyTorch, so
				// finite differences of them are not checked.
				{Name: "tall_full", Inputs: []Gen{G(F32, 5, 3)}, NoGrad: true},
				{Name: "wide_full", Inputs: []Gen{G(F32, 2, 4)}, NoGrad: true},
				{Name: "batched_f64", Inputs: []Gen{G(F64, 2, 4, 3)}, Attrs: Attrs{"full_matrices": false}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}, Attrs: Attrs{"full_matrices": false}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3, 2)}, NoGrad: true},
			}),
		decompDef("slogdet",
			"Sign and natural log of the absolute value of the determinant (LU with partial pivoting); a singular matrix gives 0 and -inf.",
			[]string{"sign", "logabsdet"}, nil,
			inferSlogdet, slogdetBackward, 10,
			[]Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "batched", Inputs: []Gen{G(F32, 3, 3, 3)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5, 5)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided()}},
				{Name: "singular", Inputs: []Gen{GV(F32, []float64{1, 2, 2, 4}, 2, 2)}, NoGrad: true},
				{Name: "empty_matrices", Inputs: []Gen{G(F32, 2, 0, 0)}, NoGrad: true},
			}),
		&OpDef{
			Name: "_solve", Category: "linalg", Internal: true,
			Doc:    "X with A X = B for square A (..., n, n) and B (..., n, k) of the same batch dims, by LU with partial pivoting (solve broadcasts).",
			Inputs: []InputSpec{{Name: "a", DTypes: linalgFloats}, {Name: "b", DTypes: linalgFloats}}, Outputs: []string{"x"},
			Infer:    inferSolve,
			Backward: solveBackward, TolScale: 10,
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 4, 4), G(F32, 4, 2)}},
				{Name: "batched", Inputs: []Gen{G(F32, 2, 3, 3), G(F32, 2, 3, 1)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5, 5), G(F64, 5, 3)}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3).AsStrided(), G(F32, 3, 2).AsStrided()}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 2, 2), G(F32, 0, 2, 1)}, NoGrad: true},
			},
		},
	)
}
