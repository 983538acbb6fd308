package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Fused elementwise kernels (core.MapFuser): a tree of map ops compiled into
// one WGSL expression over the leaves, so a chain like gelu(x * w + b) reads
// its inputs once and writes once instead of once per op. Only ops whose
// expressions need no attribute slots take part; f32 only.

var fusableUnary = map[string]bool{
	"neg": true, "abs": true, "exp": true, "expm1": true, "log": true, "log1p": true, "sqrt": true, "rsqrt": true,
	"square": true, "reciprocal": true, "sin": true, "cos": true, "tanh": true, "erf": true, "relu": true,
	"sigmoid": true,
}

var fusableBinary = map[string]bool{"add": true, "sub": true, "mul": true, "div": true, "maximum": true, "minimum": true}

// Fusable reports whether op may appear in a fused tree.
func (b *Backend) Fusable(op string, dtype core.DType) bool {
	if dtype != core.F32 {
		return false
	}
	return fusableUnary[op] || fusableBinary[op]
}

func (b *Backend) fusedExpr(e *core.FusedExpr, nIn int) (string, error) {
	if e.Op == "" {
		if e.Arg < 0 || e.Arg >= nIn {
			return "", fmt.Errorf("webgpu: fused expression reads input %d of %d", e.Arg, nIn)
		}
		return fmt.Sprintf("x%d", e.Arg), nil
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		s, err := b.fusedExpr(a, nIn)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	switch {
	case fusableUnary[e.Op] && len(args) == 1:
		return unaryExprs[e.Op](args[0], "f32", nil, nil), nil
	case fusableBinary[e.Op] && len(args) == 2:
		return binaryExprs[e.Op](args[0], args[1], "f32"), nil
	}
	return "", fmt.Errorf("webgpu: %s with %d operands cannot be fused", e.Op, len(args))
}

// FuseMap runs the tree as one map kernel over inputs broadcast to shape.
func (b *Backend) FuseMap(e *core.FusedExpr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) (*core.Tensor, error) {
	if dtype != core.F32 {
		return nil, fmt.Errorf("webgpu: fused kernels are f32, not %s", dtype)
	}
	for i, t := range inputs {
		if t.DType() != core.F32 || t.Device().Kind != "webgpu" {
			return nil, fmt.Errorf("webgpu: fused input %d is %s on %s", i, t.DType(), t.Device())
		}
	}
	expr, err := b.fusedExpr(e, len(inputs))
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.mapRun(inputs, out, expr, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// FuseMatmul computes e over the product a @ b (input 0) and extras (inputs
// 1..) in the matmul kernel's store: one pass instead of one per op.
func (b *Backend) FuseMatmul(x, y *core.Tensor, e *core.FusedExpr, extras []*core.Tensor) (*core.Tensor, error) {
	if x.Rank() < 2 || y.Rank() < 2 {
		return nil, fmt.Errorf("webgpu: fused matmul takes matrices, got shapes %v and %v", x.Shape(), y.Shape())
	}
	if len(extras) > maxEpilogueExtras {
		return nil, fmt.Errorf("webgpu: fused matmul with %d extra inputs; at most %d", len(extras), maxEpilogueExtras)
	}
	for i, t := range append([]*core.Tensor{x, y}, extras...) {
		if t.DType() != core.F32 || t.Device().Kind != "webgpu" {
			return nil, fmt.Errorf("webgpu: fused matmul input %d is %s on %s; f32 on webgpu only", i, t.DType(), t.Device())
		}
	}
	d, err := core.PlanMatmul(x.Shape(), y.Shape())
	if err != nil {
		return nil, err
	}
	for i, t := range extras {
		if t.Rank() > len(d.Out) || !fitsIn(t.Shape(), d.Out) {
			return nil, fmt.Errorf("webgpu: fused matmul extra %d of shape %v does not broadcast to the product %v", i, t.Shape(), d.Out)
		}
	}
	expr, err := b.fusedExpr(e, len(extras)+1)
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, d.Out, core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.matmulEpilogue(x, y, out, d.Batch, d.M, d.K, d.N, "", &epilogue{expr: expr, extras: extras}); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// fitsIn says whether shape s broadcasts to target without growing it.
func fitsIn(s, target core.Shape) bool {
	lead := len(target) - len(s)
	for i, v := range s {
		if v != 1 && v != target[lead+i] {
			return false
		}
	}
	return true
}

var _ core.MatmulFuser = (*Backend)(nil)
