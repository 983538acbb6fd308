package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Several elementwise trees over the same inputs in one fused loop
// (fusion.MultiMapFuser): an optimiser's step - the parameter and each of its
// state tensors - reads its inputs once, in cache-sized blocks, instead of
// making about fifteen tensors one op at a time. Each node rounds to the
// dtype as its op's kernel does (f32 and f64 arithmetic is IEEE, square
// root correctly rounded, maximum lets NaN win and keeps the first of
// equals), so the loop gives the op chain's bits: the CPU is the reference
// that defines them. Only the ops an optimiser uses are here; a tree with
// another op, or inputs that are not dense and of the output's shape, is
// refused and its caller runs the chain.

// fusedBlock is how many elements one pass of the Go loops covers (f64,
// f32 on CPUs without vector kernels, the tail after the assembly loop's
// 64-element chunks; fused_steps.go has the f32 loop), and the most one
// call of the assembly loop covers. In the Go loops every node of the
// program is one vector kernel call per block, so a block must be long
// enough for the call to vanish behind its work: at 512 (every
// slot in L1) the MLP step's Adam took 31-35% of the step's CPU profile,
// at 2048 (an Adam program's fifteen slots, 120 KB, in L2) 25-29%, and
// 4096 gained nothing more (one thread, three runs each).
const fusedBlock = 2048

// FusesExactly is true: the loop rounds as the ops do.
func (*Backend) FusesExactly() bool { return true }

// FuseMaps computes every tree over inputs into a new tensor of shape.
func (b *Backend) FuseMaps(trees []*fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) ([]*core.Tensor, error) {
	if dtype != core.F32 && dtype != core.F64 {
		return nil, fmt.Errorf("cpu: fused loops are f32 or f64, not %s", dtype)
	}
	dense := inputs
	for i, t := range inputs {
		if t.DType() != dtype || !t.Shape().Equal(shape) || t.Device() != core.CPU {
			return nil, fmt.Errorf("cpu: fused input %d is %s %v on %s, want %s %v on the CPU", i, t.DType(), t.Shape(), t.Device(), dtype, shape)
		}
		if !t.IsContiguous() {
			// A weight's gradient arrives as the transposed view of the
			// product that made it: one copy here, rather than the op chain's
			// strided reads in every op of the step (the MLP step's Adam took
			// 45% of the step that way).
			if &dense[0] == &inputs[0] {
				dense = append([]*core.Tensor(nil), inputs...)
			}
			c := t.Contiguous()
			if err := c.Err(); err != nil {
				return nil, err
			}
			defer c.Release()
			dense[i] = c
		}
	}
	inputs = dense
	prog, err := compileFused(trees, len(inputs))
	if err != nil {
		return nil, err
	}
	outs := make([]*core.Tensor, len(trees))
	for i := range outs {
		if outs[i], err = core.Empty(b, shape, dtype); err != nil {
			return nil, err
		}
		// runFused writes every element of every output (a root in
		// place, a shared root or a leaf copied, a constant filled): the
		// clearing was 4% of the MLP training step.
		claimOutput(outs[i])
	}
	if dtype == core.F32 {
		runFused[float32](prog, inputs, outs, shape.Numel())
	} else {
		runFused[float64](prog, inputs, outs, shape.Numel())
	}
	return outs, nil
}

// fusedInstr computes slot dst from slots a and b (b unused by unary ops),
// reads input arg into it (opLeaf) or holds the constant val (opConst).
type fusedInstr struct {
	op     fusedOp
	a, b   int
	arg    int
	val    float64
	scalar bool // the slot is one value for every element (built from constants only)
}

type fusedOp uint8

const (
	opLeaf fusedOp = iota
	opConst
	opAdd
	opSub
	opMul
	opDiv
	opMaximum
	opNeg
	opSqrt
)

var fusedOps = map[string]fusedOp{"add": opAdd, "sub": opSub, "mul": opMul, "div": opDiv,
	"maximum": opMaximum, "neg": opNeg, "sqrt": opSqrt}

// fusedProgram is the trees in evaluation order, one slot per distinct
// node (a subtree shared between trees is computed once); outs are the
// trees' slots.
type fusedProgram struct {
	code []fusedInstr
	outs []int
}

func compileFused(trees []*fusion.Expr, nIn int) (fusedProgram, error) {
	code, outs, err := compileExprs(trees, nIn, exprNodes[fusedInstr]{
		leaf:     func(arg int) fusedInstr { return fusedInstr{op: opLeaf, arg: arg} },
		constant: func(v float64) fusedInstr { return fusedInstr{op: opConst, val: v, scalar: true} },
		operator: fusedOperator,
		operands: func(in *fusedInstr, args []int, code []fusedInstr) {
			in.a, in.scalar = args[0], code[args[0]].scalar
			if len(args) == 2 {
				in.b = args[1]
				in.scalar = in.scalar && code[in.b].scalar
			}
		},
	})
	return fusedProgram{code: code, outs: outs}, err
}

// fusedOperator is the instruction of e's op, whose operands it checks
// (their slots come later).
func fusedOperator(e *fusion.Expr) (fusedInstr, error) {
	op, ok := fusedOps[e.Op]
	if !ok || len(e.Attrs) > 0 {
		return fusedInstr{}, fmt.Errorf("cpu: %s is not fused", e.Op)
	}
	unary := op == opNeg || op == opSqrt
	if (unary && len(e.Args) != 1) || (!unary && len(e.Args) != 2) {
		return fusedInstr{}, fmt.Errorf("cpu: fused %s with %d operands", e.Op, len(e.Args))
	}
	return fusedInstr{op: op}, nil
}

type fusedFloat interface{ ~float32 | ~float64 }

// view is a dense tensor's elements as T.
func view[T fusedFloat](t *core.Tensor) []T {
	n := t.Numel()
	if n == 0 {
		return nil
	}
	b := host(t)
	all := unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(T(0))))
	return all[t.Offset() : t.Offset()+n]
}

func runFused[T fusedFloat](p fusedProgram, inputs, outs []*core.Tensor, n int) {
	ins := make([][]T, len(inputs))
	for i, t := range inputs {
		ins[i] = view[T](t)
	}
	dst := make([][]T, len(outs))
	for i, t := range outs {
		dst[i] = view[T](t)
	}
	// A tree's root is computed straight into its output (no copy); a slot
	// that is the root of several trees is copied into the others.
	direct := make([]int, len(p.code))
	for s := range direct {
		direct[s] = -1
	}
	for k, s := range p.outs {
		if in := p.code[s]; direct[s] < 0 && !in.scalar && in.op != opLeaf {
			direct[s] = k
		}
	}
	from := 0
	if d32, ok := any(dst).([][]float32); ok && simdLevel != simdNone {
		from = n &^ (fusedChunk - 1)
		if from > 0 {
			runFusedAsm(p, any(ins).([][]float32), d32, direct, from)
		}
	}
	runFusedBlocks(p, ins, dst, direct, from, n)
}

// runFusedBlocks computes elements [start, n) of every output op by op
// over blocks of fusedBlock elements.
func runFusedBlocks[T fusedFloat](p fusedProgram, ins, dst [][]T, direct []int, start, n int) {
	blocks := (n - start + fusedBlock - 1) / fusedBlock
	// Scratch for a block, or for less when there is less (the tail after
	// the assembly loop is under 64 elements, and a whole block's scratch,
	// cleared by the allocator, was an optimiser step's biggest cost on
	// small parameters).
	width := min(fusedBlock, n-start)
	parallelFor(blocks, fusedBlock*len(p.code), func(lo, hi int) {
		slots := make([][]T, len(p.code))
		scalars := make([]T, len(p.code))
		scratch := make([]T, len(p.code)*width)
		for blk := lo; blk < hi; blk++ {
			from := start + blk*fusedBlock
			m := min(fusedBlock, n-from)
			for s, in := range p.code {
				if in.scalar {
					scalars[s] = scalarOf[T](in, scalars)
					continue
				}
				if in.op == opLeaf {
					slots[s] = ins[in.arg][from : from+m]
					continue
				}
				if k := direct[s]; k >= 0 {
					slots[s] = dst[k][from : from+m]
				} else {
					slots[s] = scratch[s*width : s*width+m]
				}
				evalFused(s, in, slots, scalars, p.code)
			}
			for k, s := range p.outs {
				if direct[s] == k {
					continue
				}
				out := dst[k][from : from+m]
				if p.code[s].scalar {
					for i := range out {
						out[i] = scalars[s]
					}
				} else {
					copy(out, slots[s])
				}
			}
		}
	})
}

// scalarOf is a constant slot's value, or an op over constant slots.
func scalarOf[T fusedFloat](in fusedInstr, sc []T) T {
	switch in.op {
	case opConst:
		return T(in.val)
	case opNeg:
		return -sc[in.a]
	case opSqrt:
		return T(math.Sqrt(float64(sc[in.a])))
	}
	return apply(in.op, sc[in.a], sc[in.b])
}

// apply is one binary op on two values, rounded to T.
func apply[T fusedFloat](op fusedOp, x, y T) T {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	case opDiv:
		return x / y
	}
	if y > x || y != y { // maximum: NaN wins, the first of equals stays (-0 before 0)
		return y
	}
	return x
}

// evalFused fills slot s's block from its operands; an operand that is a
// scalar slot is read from scalars. The loops are per op and operand kind
// so each is a plain loop the compiler keeps tight.
func evalFused[T fusedFloat](s int, in fusedInstr, slots [][]T, scalars []T, code []fusedInstr) {
	out := slots[s]
	if o, ok := any(out).([]float32); ok && evalFusedF32(o, in, any(slots).([][]float32), any(scalars).([]float32), code) {
		return
	}
	switch in.op {
	case opNeg:
		for i, x := range slots[in.a][:len(out)] {
			out[i] = -x
		}
		return
	case opSqrt:
		for i, x := range slots[in.a][:len(out)] {
			out[i] = T(math.Sqrt(float64(x)))
		}
		return
	}
	switch {
	case code[in.a].scalar:
		x, ys := scalars[in.a], slots[in.b][:len(out)]
		for i, y := range ys {
			out[i] = apply(in.op, x, y)
		}
	case code[in.b].scalar:
		xs, y := slots[in.a][:len(out)], scalars[in.b]
		switch in.op {
		case opAdd:
			for i, x := range xs {
				out[i] = x + y
			}
		case opSub:
			for i, x := range xs {
				out[i] = x - y
			}
		case opMul:
			for i, x := range xs {
				out[i] = x * y
			}
		case opDiv:
			for i, x := range xs {
				out[i] = x / y
			}
		default:
			for i, x := range xs {
				out[i] = apply(in.op, x, y)
			}
		}
	default:
		xs, ys := slots[in.a][:len(out)], slots[in.b][:len(out)]
		switch in.op {
		case opAdd:
			for i, x := range xs {
				out[i] = x + ys[i]
			}
		case opSub:
			for i, x := range xs {
				out[i] = x - ys[i]
			}
		case opMul:
			for i, x := range xs {
				out[i] = x * ys[i]
			}
		case opDiv:
			for i, x := range xs {
				out[i] = x / ys[i]
			}
		default:
			for i, x := range xs {
				out[i] = apply(in.op, x, ys[i])
			}
		}
	}
}

// fusedVec are the vector kernels of the fused ops: IEEE operations, so
// they give the Go loops' bits (and the op kernels', which use them too).
var fusedVec = map[fusedOp]ewBin{opAdd: binAdd, opSub: binSub, opMul: binMul, opDiv: binDiv, opMaximum: binMax}

// evalFusedF32 is evalFused for f32 through the vector kernels (an
// optimiser step is a dozen such ops per element; the Go loops made Adam a
// third of the MLP training step). It reports false where the CPU has none.
func evalFusedF32(out []float32, in fusedInstr, slots [][]float32, scalars []float32, code []fusedInstr) bool {
	if simdLevel == simdNone {
		return false
	}
	operand := func(k int) []float32 {
		if code[k].scalar {
			return scalars[k : k+1]
		}
		return slots[k][:len(out)]
	}
	switch in.op {
	case opNeg:
		return unF32(unNeg, out, operand(in.a))
	case opSqrt:
		return unF32(unSqrt, out, operand(in.a))
	}
	op, ok := fusedVec[in.op]
	if !ok {
		return false
	}
	binF32(op, out, operand(in.a), operand(in.b))
	return true
}
