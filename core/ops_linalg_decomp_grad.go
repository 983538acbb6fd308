package core

import (
	"fmt"
)

// Gradients of the factorisations: PyTorch's formulas (its
// FunctionsManual.cpp, real case), written with registry ops so they run on
// every backend. Triangular solves there are _solve here (an LU solve of a
// triangular matrix: the same answer, one kernel less). cholesky and eigh
// read the lower triangle only, so their formula's (symmetric) gradient G
// is pulled back through that read: tril(G + Gᵀ, -1) + diag(G), the
// gradient of the function the kernels compute, which finite differences
// confirm element by element; for a symmetric input built as X + Xᵀ it
// gives X the same gradient as PyTorch does.

func mT(x *Tensor) *Tensor    { return call1("transpose", nil, x) }
func mm(a, b *Tensor) *Tensor { return call1("matmul", nil, a, b) }
func unsq(x *Tensor, axis int) *Tensor {
	return call1("unsqueeze", Attrs{"axis": axis}, x)
}

// maskOf is an n x n constant of like's dtype and device with ones where
// keep(i, j) holds.
func maskOf(like *Tensor, n int, keep func(i, j int) bool) *Tensor {
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if keep(i, j) {
				v[i*n+j] = 1
			}
		}
	}
	return FromFloat64s(like.dtype, Shape{n, n}, v, like.Device())
}

func eyeOf(like *Tensor, n int) *Tensor {
	return maskOf(like, n, func(i, j int) bool { return i == j })
}

// triu keeps the elements of x's last two dims on and above diagonal k.
func triu(x *Tensor, k int) *Tensor {
	n := x.shape[x.Rank()-1]
	return ew("mul", x, maskOf(x, n, func(i, j int) bool { return j-i >= k }))
}

// tril keeps the elements on and below diagonal k.
func tril(x *Tensor, k int) *Tensor {
	n := x.shape[x.Rank()-1]
	return ew("mul", x, maskOf(x, n, func(i, j int) bool { return j-i <= k }))
}

// diagEmbed is the (..., n, n) matrices with v (..., n) on their diagonals.
func diagEmbed(v *Tensor) *Tensor {
	return ew("mul", unsq(v, -1), eyeOf(v, v.shape[v.Rank()-1]))
}

// batchEye is the identity with a's shape (a stack of square matrices).
func batchEye(a *Tensor) *Tensor {
	return call1("expand", Attrs{"shape": []int(a.Shape())}, eyeOf(a, a.shape[a.Rank()-1]))
}

// invOf is A⁻¹ by _solve against the identity.
func invOf(a *Tensor) *Tensor { return call1("_solve", nil, a, batchEye(a)) }

// rightSolveT is X with X Rᵀ = B, that is (R⁻¹ Bᵀ)ᵀ.
func rightSolveT(b, r *Tensor) *Tensor { return mT(call1("_solve", nil, r, mT(b))) }

// lowerReadGrad pulls a symmetric matrix's gradient back through reading
// the lower triangle: tril(G + Gᵀ, -1) + diag(G).
func lowerReadGrad(g *Tensor) *Tensor {
	n := g.shape[g.Rank()-1]
	strict := maskOf(g, n, func(i, j int) bool { return i > j })
	return ew("add", ew("mul", ew("add", g, mT(g)), strict), ew("mul", g, eyeOf(g, n)))
}

func solveBackward(g *GradCtx) ([]*Tensor, error) {
	a, x := g.Inputs[0], g.Outputs[0]
	gb := call1("_solve", nil, mT(a), g.Grads[0])
	res := []*Tensor{nil, gb}
	if g.Need[0] {
		res[0] = ew("neg", mm(gb, mT(x)))
	}
	return res, nil
}

// slogdetBackward: d logabsdet = tr(A⁻¹ dA), so the gradient is g A⁻ᵀ;
// the sign is piecewise constant and has none.
func slogdetBackward(g *GradCtx) ([]*Tensor, error) {
	gl := g.Grads[1]
	if gl == nil {
		return []*Tensor{nil}, nil
	}
	a := g.Inputs[0]
	return []*Tensor{ew("mul", unsq(unsq(gl, -1), -1), mT(invOf(a)))}, nil
}

// choleskyBackward (Iain Murray, arXiv:1602.07527, as PyTorch): with
// P = Φ(Lᵀ gL), Φ keeping the lower triangle with the diagonal halved and
// mirrored, the symmetric gradient is L⁻ᵀ P L⁻¹.
func choleskyBackward(g *GradCtx) ([]*Tensor, error) {
	l, gl := g.Outputs[0], g.Grads[0]
	if g.Attrs.Bool("upper") {
		l, gl = mT(l), mT(gl)
	}
	p := tril(mm(mT(l), gl), 0)
	p = ew("mul", ew("add", p, mT(tril(p, -1))), Scalar(0.5, p.dtype, p.Device()))
	linv := invOf(l)
	sym := mm(mT(linv), mm(p, linv))
	return []*Tensor{lowerReadGrad(sym)}, nil
}

// eighBackward: with VᵀgV's antisymmetric part F divided by the eigenvalue
// gaps E_ij = λ_j - λ_i, the gradient is V (F/E + diag(gλ)) Vᵀ. Repeated
// eigenvalues make it infinite (as in PyTorch) unless the loss does not
// depend on the eigenvectors.
func eighBackward(g *GradCtx) ([]*Tensor, error) {
	lam, v := g.Outputs[0], g.Outputs[1]
	gl, gv := g.Grads[0], g.Grads[1]
	var ga *Tensor
	if gv == nil {
		ga = mm(ew("mul", v, unsq(gl, -2)), mT(v))
	} else {
		n := lam.shape[lam.Rank()-1]
		f := mm(mT(v), gv)
		f = ew("mul", ew("sub", f, mT(f)), Scalar(0.5, f.dtype, f.Device()))
		e := ew("add", ew("sub", unsq(lam, -2), unsq(lam, -1)), eyeOf(lam, n))
		inner := ew("div", f, e)
		if gl != nil {
			inner = ew("add", inner, diagEmbed(gl))
		}
		ga = mm(v, mm(inner, mT(v)))
	}
	return []*Tensor{lowerReadGrad(ga)}, nil
}

// narrowLast keeps the first k entries of axis (-1 or -2).
func narrowLast(x *Tensor, axis, k int) *Tensor {
	return call1("slice", Attrs{"axis": axis, "start": 0, "stop": k}, x)
}

// svdBackward is PyTorch's svd_backward (real case). A full
// factorisation's extra columns of U and rows of Vh carry no information
// about A: they are dropped first, with their gradients. As in PyTorch,
// when the loss depends on the singular vectors the gradient is infinite at
// repeated singular values (and at a zero one for a non-square A); a loss
// of the singular values alone (svdvals, the 2- and nuclear norms) gets
// U diag(gS) Vh, finite everywhere.
func svdBackward(g *GradCtx) ([]*Tensor, error) {
	u, s, vh := g.Outputs[0], g.Outputs[1], g.Outputs[2]
	gu, gs, gvh := g.Grads[0], g.Grads[1], g.Grads[2]
	k := s.shape[s.Rank()-1]
	m, n := u.shape[u.Rank()-2], vh.shape[vh.Rank()-1]
	if g.Attrs.Bool("full_matrices") {
		u, vh = narrowLast(u, -1, k), narrowLast(vh, -2, k)
		if gu != nil {
			gu = narrowLast(gu, -1, k)
		}
		if gvh != nil {
			gvh = narrowLast(gvh, -2, k)
		}
	}
	if gu == nil && gvh == nil {
		if gs == nil {
			return []*Tensor{nil}, nil
		}
		return []*Tensor{mm(ew("mul", u, unsq(gs, -2)), vh)}, nil
	}
	skew := func(x *Tensor) *Tensor { return ew("sub", x, mT(x)) }
	srow, scol := unsq(s, -2), unsq(s, -1)
	s2 := ew("mul", s, s)
	e := ew("add", ew("sub", unsq(s2, -2), unsq(s2, -1)), eyeOf(s, k))
	var ga *Tensor
	switch {
	case gu != nil && gvh != nil:
		uhgu, vhgv := skew(mm(mT(u), gu)), skew(mm(vh, mT(gvh)))
		ga = ew("div", ew("add", ew("mul", uhgu, srow), ew("mul", scol, vhgv)), e)
	case gu != nil:
		ga = ew("mul", ew("div", skew(mm(mT(u), gu)), e), srow)
	default:
		ga = ew("mul", scol, ew("div", skew(mm(vh, mT(gvh))), e))
	}
	if gs != nil {
		ga = ew("add", ga, diagEmbed(gs))
	}
	if m > n && gu != nil {
		ga = mm(u, ga)
		gusinv := ew("div", gu, srow)
		ga = ew("sub", ew("add", ga, gusinv), mm(u, mm(mT(u), gusinv)))
		return []*Tensor{mm(ga, vh)}, nil
	}
	if m < n && gvh != nil {
		ga = mm(ga, vh)
		sinvgvh := ew("div", gvh, scol)
		ga = ew("sub", ew("add", ga, sinvgvh), mm(mm(sinvgvh, mT(vh)), vh))
		return []*Tensor{mm(u, ga)}, nil
	}
	return []*Tensor{mm(u, mm(ga, vh))}, nil
}

// qrBackward is PyTorch's linalg_qr_backward (real case): with
// M = gR Rᵀ - Qᵀ gQ, a tall or square A gets (Q copyltu(M) + gQ) R⁻ᵀ where
// copyltu mirrors the upper triangle; a wide one gets
// [Q tril(X - Xᵀ) R₁⁻ᵀ, 0] + Q gR with X = -M and R₁ R's leading square.
func qrBackward(g *GradCtx) ([]*Tensor, error) {
	q, r := g.Outputs[0], g.Outputs[1]
	gq, gr := g.Grads[0], g.Grads[1]
	m, n := q.shape[q.Rank()-2], r.shape[r.Rank()-1]
	if g.Attrs.String("mode") == "complete" && m > n {
		return nil, fmt.Errorf("qr with mode complete is not differentiable for tall matrices (%d x %d): part of Q is arbitrary", m, n)
	}
	var mx *Tensor
	switch {
	case gq != nil && gr != nil:
		mx = ew("sub", mm(gr, mT(r)), mm(mT(q), gq))
	case gq != nil:
		mx = ew("neg", mm(mT(q), gq))
	case gr != nil:
		mx = mm(gr, mT(r))
	default:
		return []*Tensor{nil}, nil
	}
	if m >= n {
		up := triu(mx, 0)
		sym := ew("add", up, mT(triu(mx, 1)))
		b := mm(q, sym)
		if gq != nil {
			b = ew("add", b, gq)
		}
		return []*Tensor{rightSolveT(b, r)}, nil
	}
	x := ew("neg", mx)
	ga := rightSolveT(mm(q, tril(ew("sub", x, mT(x)), 0)), narrowLast(r, -1, m))
	pads := []int{0, n - m}
	ga = call1("pad", Attrs{"pads": pads}, ga)
	if gr != nil {
		ga = ew("add", ga, mm(q, gr))
	}
	return []*Tensor{ga}, nil
}
