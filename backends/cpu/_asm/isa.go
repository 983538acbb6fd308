package main

import (
	"fmt"
	stdtypes "go/types"
	"math"
	"sort"

	"github.com/mmcloughlin/avo/gotypes"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// isa is one vector instruction set the kernels are written for: AVX2 (8
// float32 lanes, masks in vector registers) or AVX-512 (16 lanes, masks in
// k registers). The kernels are written once against its methods.
type isa struct {
	name  string // function name suffix
	lanes int    // float32 lanes per vector
	wide  bool   // AVX-512
}

var (
	avx2   = &isa{name: "AVX2", lanes: 8}
	avx512 = &isa{name: "AVX512", lanes: 16, wide: true}
)

// vecBytes is the size of one vector register.
func (s *isa) vecBytes() int { return 4 * s.lanes }

// vec is a fresh virtual vector register of the set's width.
func (s *isa) vec() VecVirtual {
	if s.wide {
		return ZMM()
	}
	return YMM()
}

// half is the register holding half a vector's bytes (the 16-bit side of a
// conversion): X for AVX2, Y for AVX-512.
func (s *isa) half(v VecVirtual) VecVirtual {
	if s.wide {
		return v.AsY().(VecVirtual)
	}
	return v.AsX().(VecVirtual)
}

// Comparison predicates of VCMPPS (ordered and quiet unless named U).
const (
	cmpEQ    = 0x00
	cmpUNORD = 0x03
	cmpNEQU  = 0x04
	cmpORD   = 0x07
	cmpNLEU  = 0x06
	cmpNGEU  = 0x19
	cmpLT    = 0x11
	cmpLE    = 0x12
	cmpGE    = 0x1d
	cmpGT    = 0x1e
)

// cmp is the mask of lanes where a pred b.
func (s *isa) cmp(pred uint8, a, b Op) Register { return s.cmpBy(VCMPPS, pred, a, b) }

// blend is m ? t : f, lane by lane, into a new register.
func (s *isa) blend(m Register, t, f Op) VecVirtual { return s.blendBy(VBLENDMPS, VBLENDVPS, m, t, f) }

// cmpBy is cmp (float32 lanes) or cmpPD (float64 lanes) by their compare
// instruction: into a k register on AVX-512, a vector mask on AVX2.
func (s *isa) cmpBy(vcmp func(...Op), pred uint8, a, b Op) Register {
	if s.wide {
		k := K()
		vcmp(U8(pred), b, a, k)
		return k
	}
	m := YMM()
	vcmp(U8(pred), b, a, m)
	return m
}

// blendBy is blend or blendPD by their AVX-512 (k mask) and AVX2 (vector
// mask) blend instructions.
func (s *isa) blendBy(masked func(...Op), vector func(m, t, f, d Op), m Register, t, f Op) VecVirtual {
	d := s.vec()
	if s.wide {
		masked(t, f, m, d)
	} else {
		vector(m, t, f, d)
	}
	return d
}

// and is the intersection of two masks.
func (s *isa) and(a, b Register) Register {
	if s.wide {
		k := K()
		KANDW(a, b, k)
		return k
	}
	m := YMM()
	VANDPS(a, b, m)
	return m
}

// or is the union of two masks.
func (s *isa) or(a, b Register) Register {
	if s.wide {
		k := K()
		KORW(a, b, k)
		return k
	}
	m := YMM()
	VORPS(a, b, m)
	return m
}

// orInto ORs a bit per set lane of m into the general register flag.
func (s *isa) orInto(m Register, flag GPVirtual) {
	r := GP32()
	if s.wide {
		KMOVW(m, r)
	} else {
		VMOVMSKPS(m, r)
	}
	ORL(r, flag.As32())
}

// constants are the vector constants used so far, by bit pattern; each is
// emitted once as 64 bytes (16 copies) that an AVX2 or AVX-512 operand reads.
var constants = map[uint32]bool{}

// constPrefix starts every constant's symbol: each generated file has its
// own, since the files share one package.
var constPrefix = "ewc"

func constName(bits uint32) string { return fmt.Sprintf("%s%08x", constPrefix, bits) }

// cu is a full-vector memory operand of the 32-bit pattern bits.
func cu(bits uint32) Mem {
	constants[bits] = true
	return Mem{Symbol: NewStaticSymbol(constName(bits)), Base: StaticBase}
}

// cf is a full-vector memory operand of the float32 value f.
func cf(f float32) Mem { return cu(math.Float32bits(f)) }

// emitConstants writes the DATA of every constant used.
func emitConstants() {
	emitConstantsOf(constants, constName, 4, func(k uint32) Constant { return U32(k) })
}

// emitConstantsOf writes each constant of set, in order, as a 64-byte
// vector of size-byte copies of it (emitConstants, emitConstants64).
func emitConstantsOf[K uint32 | uint64](set map[K]bool, name func(K) string, size int, value func(K) Constant) {
	keys := make([]K, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		GLOBL(name(k), RODATA|NOPTR)
		for i := 0; i < 64/size; i++ {
			DATA(size*i, value(k))
		}
	}
}

// load is a new register holding m.
func (s *isa) load(m Op) VecVirtual {
	v := s.vec()
	VMOVUPS(m, v)
	return v
}

// stream is one array a kernel walks: a pointer and how many bytes it
// moves per vector of float32 lanes. A broadcast operand has step 0 and
// points at a buffer of at least unroll vectors of one repeated value, so
// the same displacements read it.
type stream struct {
	ptr   GPVirtual
	elem  int // bytes per element (1 for bool, 2 for f16, 4, 8 for int64)
	inc   Op  // nil: always a full array; else a register holding elem or 0
	big   Op  // bytes per unrolled block
	small Op  // bytes per vector
}

// at is the memory operand of vector j of the current block.
func (st *stream) at(s *isa, j int) Mem {
	return Mem{Base: st.ptr, Disp: j * s.lanes * st.elem}
}

// arrayParam loads a pointer parameter as a stream that is always full.
func arrayParam(name string, elem int) *stream {
	p := GP64()
	Load(Param(name), p)
	return &stream{ptr: p, elem: elem}
}

// broadcastParam loads a pointer and its per-element byte step (elem or 0).
func broadcastParam(name, incName string, elem int) *stream {
	st := arrayParam(name, elem)
	st.inc = Load(Param(incName), GP64())
	return st
}

// prepare computes the per-block and per-vector steps of every stream.
func (s *isa) prepare(streams []*stream, unroll int) {
	for _, st := range streams {
		if st.inc == nil {
			st.big = U32(unroll * s.lanes * st.elem)
			st.small = U32(s.lanes * st.elem)
			continue
		}
		// inc is elem or 0 bytes: scale it to the vector and block sizes.
		big, small := GP64(), GP64()
		MOVQ(st.inc, small)
		IMUL3Q(U32(s.lanes), small, small)
		MOVQ(small, big)
		IMUL3Q(U32(unroll), big, big)
		st.big, st.small = big, small
	}
}

// loops emits the body of a streaming kernel: blocks of unroll vectors,
// then single vectors, over n elements (n is a multiple of 16, so of every
// vector width). body(j) handles vector j of the block.
func (s *isa) loops(n GPVirtual, streams []*stream, unroll int, body func(j int)) {
	s.prepare(streams, unroll)
	if unroll > 1 {
		Label("block")
		CMPQ(n, U32(unroll*s.lanes))
		JL(LabelRef("single"))
		for j := 0; j < unroll; j++ {
			body(j)
		}
		for _, st := range streams {
			ADDQ(st.big, st.ptr)
		}
		SUBQ(U32(unroll*s.lanes), n)
		JMP(LabelRef("block"))
	}
	Label("single")
	TESTQ(n, n)
	JE(LabelRef("done"))
	body(0)
	for _, st := range streams {
		ADDQ(st.small, st.ptr)
	}
	SUBQ(U32(s.lanes), n)
	JMP(LabelRef("single"))
	Label("done")
	VZEROUPPER()
}

// loadFloat loads a float32 or float64 parameter into x, and storeFloat
// stores x into a float result, with VEX moves. avo's Load and Store emit
// the legacy SSE MOVSS and MOVSD, and a legacy SSE instruction that runs
// while a kernel's 256- or 512-bit registers are in use (the second
// scalar parameter, loaded after the first was broadcast; a result
// stored before VZEROUPPER) pays the SSE/AVX transition: on the 2-core
// Xeon these benchmarks run on, rdNormWBF32AVX512 on a 32-float row took
// 130-280 ns a call with its two MOVSS loads and 4.4 ns with VMOVSS, which
// made a small UNet's layer norms cost ten times their arithmetic.
func loadFloat(name string, x Register) {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	if b.Type.Kind() == stdtypes.Float32 {
		VMOVSS(b.Addr, x)
		return
	}
	VMOVSD(b.Addr, x)
}

func storeFloat(x Register, dst gotypes.Component) {
	b, err := dst.Resolve()
	if err != nil {
		panic(err)
	}
	if b.Type.Kind() == stdtypes.Float32 {
		VMOVSS(x, b.Addr)
		return
	}
	VMOVSD(x, b.Addr)
}
