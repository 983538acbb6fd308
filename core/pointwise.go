package core

import (
	"fmt"
	"slices"
)

// Pointwise describes an elementwise op's arithmetic once, for every
// backend: the CPU backend builds the op's kernel from F or F2 (broadcast,
// strided views, every float dtype and the float32 fast path come from its
// elementwise machinery), and the GPU backends build theirs from Expr
// (backends/lower, whose expression language WebGPU compiles as WGSL and
// CUDA translates). An op that sets it therefore needs no kernel file:
// adding it is its OpDef and its PyTorch reference (docs/adding-an-op.md).
// A backend that registers its own kernel for the op (a vectorised one)
// replaces the derived kernel on that backend only.
type Pointwise struct {
	// F is a one-input op on one element, for the call's attributes.
	// Values arrive as float64 and the result is rounded once to the
	// output dtype, so f16, bf16, f32 and f64 all get the correctly rounded
	// value of the float64 math.
	F func(a Attrs) func(x float64) float64
	// F2 is the same for a two-input op (inputs broadcast as for add).
	// GPU binary kernels take no attributes, so an op with F2 has none.
	F2 func(a Attrs) func(x, y float64) float64
	// Single2, when set, is F2 for f32 operands, for an op whose float32
	// result is not its float64 result rounded (nextafter steps one float32
	// ulp, not one float64 ulp). f16 and bf16 would take the same float32
	// path, so an op that sets it accepts neither.
	Single2 func(a Attrs) func(x, y float32) float32
	// Expr writes the op as an expression over args (one per input, each
	// already an expression of compute type ct, "f32" for float inputs).
	// A float attribute is passed through slot k with s.SetF(k, v) and read
	// as pf(k)u in the expression (at most lower.NumScalars slots); s is
	// nil where the expression is fused into a larger kernel, which only
	// ops without attributes are. The helpers backends/lower defines
	// (m_exp, m_log1p, m_tanh, m_erf, m_sigmoid, m_atan2, is_nan, ...) may
	// be used: they keep the GPU results within the CPU's tolerance.
	Expr func(args []string, ct string, a Attrs, s ScalarSlots) string
	// Cost is the work per element relative to an add (a transcendental is
	// about 8); it decides when splitting across cores pays. 0 means 8.
	Cost int
}

// ScalarSlots receives the float attributes a Pointwise expression reads
// (backends/lower.Scalars implements it).
type ScalarSlots interface{ SetF(slot int, v float64) }

// checkPointwise rejects a Pointwise that the backends could not build
// kernels from: the mistake shows at start-up, not on some device later.
func checkPointwise(def *OpDef) error {
	p := def.Pointwise
	if p == nil {
		return nil
	}
	n := 1
	if p.F2 != nil {
		n = 2
	}
	switch {
	case (p.F == nil) == (p.F2 == nil):
		return fmt.Errorf("register %s: Pointwise needs exactly one of F (one input) and F2 (two inputs)", def.Name)
	case p.Expr == nil:
		return fmt.Errorf("register %s: Pointwise has no Expr, so the GPU backends could not run it", def.Name)
	case len(def.Inputs) != n || def.Inputs[0].Variadic || def.Inputs[n-1].Optional:
		return fmt.Errorf("register %s: Pointwise with %s takes exactly %d required input(s), the OpDef declares %d",
			def.Name, map[int]string{1: "F", 2: "F2"}[n], n, len(def.Inputs))
	case p.F2 != nil && len(def.Attrs) > 0:
		return fmt.Errorf("register %s: a two-input Pointwise op cannot take attributes (GPU binary kernels have none), it has %d",
			def.Name, len(def.Attrs))
	case p.Single2 != nil && (p.F2 == nil || !refusesHalves(def.Inputs)):
		return fmt.Errorf("register %s: Pointwise.Single2 needs F2 and inputs whose DTypes exclude f16 and bf16", def.Name)
	case def.View != nil || def.Random || def.Dynamic:
		return fmt.Errorf("register %s: a Pointwise op cannot be a view, random or dynamic", def.Name)
	}
	return nil
}

// refusesHalves reports whether every input lists its dtypes and none of
// them is f16 or bf16.
func refusesHalves(in []InputSpec) bool {
	for _, spec := range in {
		if spec.DTypes == nil || slices.Contains(spec.DTypes, F16) || slices.Contains(spec.DTypes, BF16) {
			return false
		}
	}
	return true
}
