package core

import "fmt"

// ElementBody is an op's GPU kernel written once, as the function that
// computes one element of its output: WebGPU compiles it as WGSL and CUDA
// translates it (backends/lower's statement dialect), so an op that is
// neither elementwise nor made of other ops needs no GPU kernel file -
// adding it is its OpDef with the body, its CPU kernel (the reference
// implementation) and its PyTorch reference (docs/adding-an-op.md, shape
// D). A backend that registers its own kernel for the op replaces the
// derived one there.
//
// The body computes output element i (a u32 flat index into the dense
// row-major output) and ends with `return EXPR;` in the output's compute
// type (t.Out). It reads its inputs through helpers, input k's being
// xK(j) (element j as the float compute type t.Float), xKi(j) (as i32),
// xKu(j) (as u32), xKv(j) (in its own compute type), dimK(d), rankK and
// numelK(); the output's shape is odim(d), orank and onumel(). Inputs are
// read dense: a view is copied first. Shapes reach the kernel at run time,
// never in its source, so one compiled kernel serves every shape of a
// rank.
type ElementBody struct {
	// Body returns the body for the compute types t and the call's
	// attributes, which it passes through the scalar slots s (s.SetF(k, v)
	// read as pf(ku), SetI as pi(ku), SetU as pu(ku); at most 8) rather
	// than writing them into the source: the source is the compiled
	// kernel's cache key, so it should depend on the types alone.
	Body func(t BodyTypes, a Attrs, s BodySlots) string
}

// BodyTypes are the dialect types an ElementBody computes in: Float is the
// float compute type ("f32"; "f64" on CUDA where an operand is f64), Out
// the output's compute type, which the body returns ("f32", "f64", "i32",
// "i64" or "u32": bool and the unsigned integers are u32).
type BodyTypes struct{ Float, Out string }

// BodySlots receives the attributes an ElementBody reads at run time
// (backends/lower.Scalars implements it).
type BodySlots interface {
	ScalarSlots
	SetI(slot int, v int64)
	SetU(slot int, v uint32)
}

// checkElementBody rejects an OpDef whose body the backends could not
// build a kernel from, at start-up.
func checkElementBody(def *OpDef) error {
	if def.GPUBody == nil {
		return nil
	}
	switch {
	case def.GPUBody.Body == nil:
		return fmt.Errorf("register %s: GPUBody has no Body", def.Name)
	case def.Pointwise != nil || def.Compose != nil:
		return fmt.Errorf("register %s: GPUBody is a kernel; an op with Pointwise or Compose has its kernels already", def.Name)
	case def.View != nil || def.Random || def.Dynamic:
		return fmt.Errorf("register %s: a GPUBody op cannot be a view, random or dynamic (one output element per thread, its shape known before the launch)", def.Name)
	}
	for _, in := range def.Inputs {
		if in.Variadic || in.Optional {
			return fmt.Errorf("register %s: a GPUBody op cannot take a variadic or optional input (%s): each input is bound by position", def.Name, in.Name)
		}
	}
	return nil
}

// derivable reports whether a backend's deriver may build the op's kernel
// from its description.
func derivable(def *OpDef) bool { return def.Pointwise != nil || def.GPUBody != nil }
