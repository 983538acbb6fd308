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

var _ core.MapFuser = (*Backend)(nil)
