package cpu

import "unsafe"

// The f32 fused loop through the assembly program loop (rdFusedF32 in
// reduce_amd64.s, written by _asm/fused.go): the compiled program becomes
// a list of steps whose operands are all pointers plus a mask, and the
// loop runs every step on one 64-element chunk before the next chunk, so
// the intermediates stay in L1. Op by op over 2048-element blocks (the Go
// loop below, kept for the tail, f64 and CPUs without the vector kernels)
// each node was a kernel call over L2: the MLP step's Adam took a third
// of the step's CPU time that way.

// fusedChunk is the elements the assembly loop covers per pass (four
// AVX-512 or eight AVX2 vectors), as in _asm/fused.go.
const fusedChunk = 64

// opCopy writes a slot into a second output (a root shared by two trees,
// a leaf or a constant returned as a tree): the assembly's only op that is
// not a fusedOp.
const opCopy fusedOp = opSqrt + 1

// fusedStep is one step of the assembly loop, laid out as _asm/fused.go
// reads it (64 bytes): dst = op(a, b), each operand at its pointer plus
// the chunk's byte offset ANDed with its mask (-1: an array that advances
// with the chunk; 0: a 64-float slot or broadcast value that does not).
type fusedStep struct {
	op                  int64
	dst, a, b           unsafe.Pointer
	dmask, amask, bmask int64
	_                   int64
}

// fusedOperand is where a slot's values are read from.
type fusedOperand struct {
	ptr  unsafe.Pointer
	mask int64
}

// fusedAsmSteps builds the steps of program p over ins and outs for one
// worker, whose slots and broadcast values live in scratch (64 floats a
// slot of p); scalars receives the constant slots' values.
func fusedAsmSteps(p fusedProgram, ins, dst [][]float32, direct []int, scalars, scratch []float32) []fusedStep {
	where := make([]fusedOperand, len(p.code))
	slot := func(s int) unsafe.Pointer { return unsafe.Pointer(&scratch[s*fusedChunk]) }
	steps := make([]fusedStep, 0, len(p.code)+len(p.outs))
	for s, in := range p.code {
		switch {
		case in.scalar:
			scalars[s] = scalarOf[float32](in, scalars)
			buf := scratch[s*fusedChunk : (s+1)*fusedChunk]
			for i := range buf {
				buf[i] = scalars[s]
			}
			where[s] = fusedOperand{slot(s), 0}
		case in.op == opLeaf:
			where[s] = fusedOperand{unsafe.Pointer(&ins[in.arg][0]), -1}
		default:
			where[s] = fusedOperand{slot(s), 0}
			if k := direct[s]; k >= 0 {
				where[s] = fusedOperand{unsafe.Pointer(&dst[k][0]), -1}
			}
			a, b := where[in.a], where[in.a]
			if in.op != opNeg && in.op != opSqrt {
				b = where[in.b]
			}
			steps = append(steps, fusedStep{op: int64(in.op), dst: where[s].ptr, dmask: where[s].mask,
				a: a.ptr, amask: a.mask, b: b.ptr, bmask: b.mask})
		}
	}
	for k, s := range p.outs {
		if direct[s] == k {
			continue
		}
		a := where[s]
		steps = append(steps, fusedStep{op: int64(opCopy), dst: unsafe.Pointer(&dst[k][0]), dmask: -1,
			a: a.ptr, amask: a.mask, b: a.ptr, bmask: a.mask})
	}
	return steps
}

// runFusedAsm computes elements [0, whole) of every output, whole a
// multiple of fusedChunk, through the assembly loop, split across threads.
func runFusedAsm(p fusedProgram, ins, dst [][]float32, direct []int, whole int) {
	chunks := whole / fusedChunk
	parallelFor(chunks, fusedChunk*len(p.code), func(lo, hi int) {
		scalars := make([]float32, len(p.code))
		scratch := make([]float32, len(p.code)*fusedChunk)
		steps := fusedAsmSteps(p, ins, dst, direct, scalars, scratch)
		// Calls of at most fusedBlock elements: the loop cannot be
		// preempted, and the collector should not wait on a long one.
		const per = fusedBlock / fusedChunk
		for c := lo; c < hi; c += per {
			vecFusedF32(wide(), (*int64)(unsafe.Pointer(&steps[0])), len(steps), c*fusedChunk*4, min(per, hi-c))
		}
	})
}
