package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The fused program loop (backends/cpu/fused_multi.go): an optimiser's
// update, a dozen elementwise ops over the parameter, its gradient and
// its state, run chunk by chunk with every intermediate in a 256-byte slot
// of L1, instead of op by op over blocks that live in L2. Each step reads
// its operands at dst/a/b plus the chunk's byte offset ANDed with the
// step's mask (-1: an array that advances with the chunk; 0: a slot or a
// broadcast value that does not), so inputs, outputs, slots and constants
// are all the same kind of operand and the loop needs no copies. Each op
// is the IEEE instruction its op's kernel uses, so the loop gives the op
// chain's bits.

// fusedChunk is the elements one pass of the program covers: four AVX-512
// or eight AVX2 vectors.
const fusedChunk = 64

// fusedStepBytes is the size of backends/cpu's fusedStep: op, dst, a, b,
// then the three masks, padded to 64 bytes.
const fusedStepBytes = 64

// fusedOpCode are fused_multi.go's fusedOp values, plus the copy that
// writes a value into a second output.
var fusedOpCode = []struct {
	name  string
	code  int
	unary bool
	op    binaryOp
}{
	{"mul", 4, false, func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VMULPS(b, a, d) }},
	{"add", 2, false, func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VADDPS(b, a, d) }},
	{"sub", 3, false, func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VSUBPS(b, a, d) }},
	{"div", 5, false, func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VDIVPS(b, a, d) }},
	{"sqrt", 8, true, func(s *isa, a VecVirtual, _ Mem, d VecVirtual) { VSQRTPS(a, d) }},
	{"maximum", 6, false, extremum(false)},
	{"neg", 7, true, func(s *isa, a VecVirtual, _ Mem, d VecVirtual) { VXORPS(cu(0x80000000), a, d) }},
	{"copy", 9, true, func(s *isa, a VecVirtual, _ Mem, d VecVirtual) { VMOVAPS(a, d) }},
}

func genFusedProgram(s *isa) {
	name := "rdFusedF32" + s.name
	text(name, "func(prog *int64, nprog int, off int, count int)")
	Doc(name+" runs the nprog steps at prog over chunks chunks of 64 float32,",
		"the first at byte offset off of every advancing operand.")
	base := Load(Param("prog"), GP64())
	nprog := Load(Param("nprog"), GP64())
	off := Load(Param("off"), GP64())
	chunks := Load(Param("count"), GP64())
	p, k, t := GP64(), GP64(), GP64()
	d, a, b := GP64(), GP64(), GP64()
	field := func(disp int) Mem { return Mem{Base: p, Disp: disp} }
	// operand sets r to the pointer field at disp plus off ANDed with the
	// mask at maskDisp.
	operand := func(r GPVirtual, disp, maskDisp int) {
		MOVQ(field(maskDisp), t)
		ANDQ(off, t)
		MOVQ(field(disp), r)
		ADDQ(t, r)
	}
	Label("chunk")
	TESTQ(chunks, chunks)
	JE(LabelRef("done"))
	MOVQ(base, p)
	MOVQ(nprog, k)
	Label("step")
	TESTQ(k, k)
	JE(LabelRef("next"))
	operand(d, 8, 32)
	operand(a, 16, 40)
	operand(b, 24, 48)
	for _, op := range fusedOpCode {
		CMPQ(field(0), U8(op.code))
		JE(LabelRef("op_" + op.name))
	}
	JMP(LabelRef("stepped")) // an unknown code: the Go side never sends one
	vecs := fusedChunk / s.lanes
	for _, op := range fusedOpCode {
		Label("op_" + op.name)
		for j := range vecs {
			disp := j * s.vecBytes()
			av, r := s.load(Mem{Base: a, Disp: disp}), s.vec()
			op.op(s, av, Mem{Base: b, Disp: disp}, r)
			VMOVUPS(r, Mem{Base: d, Disp: disp})
		}
		JMP(LabelRef("stepped"))
	}
	Label("stepped")
	ADDQ(U8(fusedStepBytes), p)
	DECQ(k)
	JMP(LabelRef("step"))
	Label("next")
	ADDQ(U32(4*fusedChunk), off)
	DECQ(chunks)
	JMP(LabelRef("chunk"))
	Label("done")
	VZEROUPPER()
	RET()
}
