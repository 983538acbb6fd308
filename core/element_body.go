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
//
// A body that must check its inputs' values (an index in range) writes
// `return fail(K);` (K a literal 0 to 7) where it finds a bad one: the op
// then fails with the CPU kernel's error for the same inputs
// (BodyFailure), so the message names the values as the reference does,
// on every backend alike.
type ElementBody struct {
	// Body returns the body for the compute types t and the call's
	// attributes, which it passes through the scalar slots s (s.SetF(k, v)
	// read as pf(ku), SetI as pi(ku), SetU as pu(ku); at most 8) rather
	// than writing them into the source: the source is the compiled
	// kernel's cache key, so it should depend on the types alone.
	Body func(t BodyTypes, a Attrs, s BodySlots) string

	// Rows, when set, makes Body a row body: the work of one of Rows(...)
	// rows, done by a group of lanes together (backends/lower's row
	// dialect: row, lane, lanes, store(J, V);, let S = row_sum(V); and
	// row_max, row_min), for an op whose output elements depend on a whole
	// row of its input (a norm, a softmax, a reduction). ins are the
	// inputs' shapes (nil for an absent optional input), out the output's.
	// A row body may take optional inputs (t.In says which came).
	Rows func(ins []Shape, out Shape, a Attrs) int
}

// BodyTypes are the dialect types an ElementBody computes in: Float is the
// float compute type ("f32"; "f64" on CUDA where an operand is f64), Out
// the output's compute type, which the body returns ("f32", "f64", "i32",
// "i64" or "u32": bool and the unsigned integers are u32).
type BodyTypes struct {
	Float, Out string
	// In[k] is input k's dtype (a row body's default may depend on it),
	// Invalid for an absent optional input, which has no helpers.
	In []DType
}

// BodySlots receives the attributes an ElementBody reads at run time
// (backends/lower.Scalars implements it).
type BodySlots interface {
	ScalarSlots
	SetI(slot int, v int64)
	SetU(slot int, v uint32)
}

// RowsOf is the number of rows of a row body's call (Rows; 1 for an
// element body), refused outside 0 to limit (a backend's grid).
func (b *ElementBody) RowsOf(op string, ins []Shape, out Shape, a Attrs, limit int) (int, error) {
	if b.Rows == nil {
		return 1, nil
	}
	rows := b.Rows(ins, out, a)
	if rows < 0 || rows > limit {
		return 0, fmt.Errorf("%s: its GPU row body has %d rows; a launch runs 0 to %d", op, rows, limit)
	}
	return rows, nil
}

// BodyInputs are a kernel call's input dtypes and shapes as a row body's
// BodyTypes.In and Rows take them (Invalid and nil for an absent optional
// input).
func BodyInputs(ins []*Tensor) ([]DType, []Shape) {
	dtypes, shapes := make([]DType, len(ins)), make([]Shape, len(ins))
	for j, t := range ins {
		if t != nil {
			dtypes[j], shapes[j] = t.DType(), t.Shape()
		}
	}
	return dtypes, shapes
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
		if in.Variadic || in.Optional && def.GPUBody.Rows == nil {
			return fmt.Errorf("register %s: a GPUBody op cannot take a variadic or optional input (%s): each input is bound by position (a row body may take an optional one)", def.Name, in.Name)
		}
	}
	return nil
}

// derivable reports whether a backend's deriver may build the op's kernel
// from its description.
func derivable(def *OpDef) bool { return def.Pointwise != nil || def.GPUBody != nil }

// BodyFailure is the error of an op whose GPU body failed its check
// (return fail(K)) on these inputs: the CPU kernel's error for the same
// inputs, copied to the host, so the message is the reference's, with the
// values; where the CPU kernel accepts them, an error saying that the
// body and the reference disagree.
func BodyFailure(op string, check int, ins []*Tensor, a Attrs) error {
	host := make([]*Tensor, len(ins))
	for i, t := range ins {
		if t.Err() != nil {
			// A check the browser deferred to the next read runs after
			// the caller may have released the inputs.
			return opErr(op, "its GPU body failed check %d (the inputs were released before the values could be named)", check)
		}
		host[i] = t
		if t.Device().Kind != CPU.Kind {
			host[i] = t.Detach().To(CPU)
			defer host[i].Release()
		}
	}
	outs, err := Call(op, host, a)
	if err != nil {
		return err
	}
	for _, o := range outs {
		o.Release()
	}
	return opErr(op, "its GPU body failed check %d on inputs that the CPU kernel accepts (the body and the reference disagree: a bug to report)", check)
}
