package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Reduction kernels. A row kernel reduces n elements (a multiple of 16;
// the Go side finishes the tail) to a partial result the Go side
// combines across blocks: sums accumulate in float64 whatever the input,
// in four vector accumulators, so a block's sum is a few roundings of
// float64 from exact, except the plain float32 sum, which first adds four
// elements per lane in float32 (genSumF32 says why and what it costs in
// accuracy); extremes stay in the input's type and report NaN
// separately. A column kernel updates one accumulator per element of a
// row (a reduction over leading or middle axes).

// genReduceFile emits reduce_amd64.s: these kernels and the row kernels
// (rows.go) for both instruction sets.
func genReduceFile() {
	constPrefix = "rdc"
	for _, s := range []*isa{avx2, avx512} {
		genRowSums(s)
		genExtremes(s)
		genArgExtremes(s)
		genColumns(s)
		genIntSums(s)
		genRowKernels(s)
		genDotF32(s)
		genFusedProgram(s)
	}
	emitConstants()
	emitConstants64()
	emitIota()
	if *dispatch != "" {
		writeReduceDispatch(*dispatch)
	}
	Generate()
}

// source is the element type a kernel reads.
type source struct {
	name   string // function name part
	gotype string
	elem   int // bytes
}

var (
	srcF32 = &source{"F32", "float32", 4}
	srcF64 = &source{"F64", "float64", 8}
)

// sumForms are what a row sum adds up: x, |x|, x², or 1 where x != 0
// (NaN included).
var sumForms = []struct{ name, doc string }{
	{"Sum", "x"}, {"SumAbs", "|x|"}, {"SumSq", "x²"}, {"CountNz", "1 where x != 0 (NaN counts)"},
}

// ptr is a pointer register and the bytes it moves per element.
type ptr struct {
	reg  GPVirtual
	elem int
}

// param loads a pointer parameter.
func param(name string, elem int) ptr {
	p := GP64()
	Load(Param(name), p)
	return ptr{p, elem}
}

// loadInt loads an integer parameter.
func loadInt(name string) GPVirtual {
	r := GP64()
	Load(Param(name), r)
	return r
}

// at is the memory operand at element e of block position 0.
func (p ptr) at(e int) Mem { return Mem{Base: p.reg, Disp: e * p.elem} }

// rloop runs body over n elements (a multiple of 16) in steps of one
// float32 vector (s.lanes elements): blocks of unroll steps, body(j) for
// step j of a block, then single steps with j = 0. Unlike loops it leaves
// the upper halves alone, as the caller still needs its accumulators.
func (s *isa) rloop(n GPVirtual, ptrs []ptr, unroll int, body func(j int)) {
	if unroll > 1 {
		Label("rblock")
		CMPQ(n, U32(unroll*s.lanes))
		JL(LabelRef("rsingle"))
		for j := 0; j < unroll; j++ {
			body(j)
		}
		for _, p := range ptrs {
			ADDQ(U32(unroll*s.lanes*p.elem), p.reg)
		}
		SUBQ(U32(unroll*s.lanes), n)
		JMP(LabelRef("rblock"))
	}
	Label("rsingle")
	TESTQ(n, n)
	JE(LabelRef("rdone"))
	body(0)
	for _, p := range ptrs {
		ADDQ(U32(s.lanes*p.elem), p.reg)
	}
	SUBQ(U32(s.lanes), n)
	JMP(LabelRef("rsingle"))
	Label("rdone")
}

// load64 is half h of step j's elements as float64: s.lanes/2 of them,
// widened from float32 or read as they are.
func (s *isa) load64(src *source, p ptr, j, h int) VecVirtual {
	v := s.vec()
	m := p.at(j*s.lanes + h*s.lanes/2)
	if src.elem == 4 {
		VCVTPS2PD(m, v)
	} else {
		VMOVUPD(m, v)
	}
	return v
}

// widen64 is half h of the float32 register v as float64.
func (s *isa) widen64(v VecVirtual, h int) VecVirtual {
	d := s.vec()
	src := s.half(v)
	if h == 1 {
		src = s.half(s.vec())
		if s.wide {
			VEXTRACTF32X8(U8(1), v, src)
		} else {
			VEXTRACTF128(U8(1), v, src)
		}
	}
	VCVTPS2PD(src, d)
	return d
}

// zeros is k fresh registers of zeros.
func (s *isa) zeros(k int) []VecVirtual {
	r := make([]VecVirtual, k)
	for i := range r {
		r[i] = s.zero()
	}
	return r
}

// constants64 are the float64 constants used, emitted like constants.
var constants64 = map[uint64]bool{}

func const64Name(bits uint64) string { return fmt.Sprintf("rdq%016x", bits) }

// cq is a full-vector memory operand of the 64-bit pattern bits.
func cq(bits uint64) Mem {
	constants64[bits] = true
	return Mem{Symbol: NewStaticSymbol(const64Name(bits)), Base: StaticBase}
}

// cd is a full-vector memory operand of the float64 value f.
func cd(f float64) Mem { return cq(math.Float64bits(f)) }

func emitConstants64() {
	emitConstantsOf(constants64, const64Name, 8, func(k uint64) Constant { return U64(k) })
}

// laneIndex is the int32 lanes 0, 1, ..., 15: each lane's first index.
func laneIndex() Mem { return Mem{Symbol: NewStaticSymbol("rdiota"), Base: StaticBase} }

func emitIota() {
	GLOBL("rdiota", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(i))
	}
}

// cmpPD is the mask of float64 lanes where a pred b.
func (s *isa) cmpPD(pred uint8, a, b Op) Register { return s.cmpBy(VCMPPD, pred, a, b) }

// blendPD is m ? t : f on float64 lanes.
func (s *isa) blendPD(m Register, t, f Op) VecVirtual {
	return s.blendBy(VBLENDMPD, VBLENDVPD, m, t, f)
}

// blendInto sets d = m ? t : d, lane by lane, in place (a loop's state
// must stay in its register).
func (s *isa) blendInto(m Register, t Op, d VecVirtual) {
	if s.wide {
		VBLENDMPS(t, d, m, d)
	} else {
		VBLENDVPS(m, t, d, d)
	}
}

// fold combines v's lanes pairwise into its lowest with op (on whole
// vectors, then halves, then the last pair), and returns the X register
// holding it. f64 selects the float64 lane layout.
func (s *isa) fold(v VecVirtual, f64 bool, vop, sop func(a, b, d Op)) VecVirtual {
	y := v
	if s.wide {
		hi := YMM()
		if f64 {
			VEXTRACTF64X4(U8(1), v, hi)
		} else {
			VEXTRACTF32X8(U8(1), v, hi)
		}
		y = YMM()
		vop(hi, v.AsY(), y)
	}
	hx, x := XMM(), XMM()
	VEXTRACTF128(U8(1), y, hx)
	vop(hx, y.AsX(), x)
	t := XMM()
	if f64 {
		VUNPCKHPD(x, x, t)
		sop(t, x, x)
		return x
	}
	VMOVHLPS(x, x, t)
	vop(t, x, x)
	VMOVSHDUP(x, t)
	sop(t, x, x)
	return x
}

func addPD(a, b, d Op) { VADDPD(a, b, d) }
func addPS(a, b, d Op) { VADDPS(a, b, d) }
func addSS(a, b, d Op) { VADDSS(a, b, d) }
func addSD(a, b, d Op) { VADDSD(a, b, d) }
func mulPD(a, b, d Op) { VMULPD(a, b, d) }
func mulSD(a, b, d Op) { VMULSD(a, b, d) }

// sum4 adds four accumulators into the first, in a fixed order.
func sum4(acc []VecVirtual, op func(a, b, d Op)) VecVirtual {
	op(acc[1], acc[0], acc[0])
	op(acc[3], acc[2], acc[2])
	op(acc[2], acc[0], acc[0])
	return acc[0]
}

// addForm adds form f of the float64 vector v into acc.
func (s *isa) addForm(f string, v, acc VecVirtual) {
	switch f {
	case "Sum":
		VADDPD(v, acc, acc)
	case "SumAbs":
		VANDPD(cq(math.MaxInt64), v, v)
		VADDPD(v, acc, acc)
	case "SumSq":
		VFMADD231PD(v, v, acc)
	case "CountNz":
		nz := s.cmpPD(cmpNEQU, v, s.zero())
		VADDPD(s.blendPD(nz, cd(1), s.zero()), acc, acc)
	}
}

func genRowSums(s *isa) {
	for _, src := range []*source{srcF32, srcF64} {
		for _, f := range sumForms {
			if f.name == "Sum" && src == srcF32 {
				genSumF32(s)
				continue
			}
			name := "rd" + f.name + src.name + s.name
			text(name, "func(x *"+src.gotype+", n int) float64")
			Doc(name+" is the sum over x[:n] of "+f.doc+", in float64.", "n is a multiple of 16.")
			x := param("x", src.elem)
			n := loadInt("n")
			acc := s.zeros(4)
			s.rloop(n, []ptr{x}, 2, func(j int) {
				for h := 0; h < 2; h++ {
					s.addForm(f.name, s.load64(src, x, j, h), acc[2*j+h])
				}
			})
			r := s.fold(sum4(acc, addPD), true, addPD, addSD)
			VZEROUPPER()
			storeFloat(r, ReturnIndex(0))
			RET()
		}

		name := "rdSumShift" + src.name + s.name
		text(name, "func(x *"+src.gotype+", n int, k float64) (s1, s2 float64)")
		Doc(name+" is the sums of d and d² over x[:n], d = x - k, in float64: a",
			"block's moments about one of its elements, whose cancellation is bounded",
			"by the block's length (Samuelson). n is a multiple of 16.")
		x := param("x", src.elem)
		n := loadInt("n")
		kx := XMM()
		loadFloat("k", kx)
		kv := s.vec()
		VBROADCASTSD(kx, kv)
		s1, s2 := s.zeros(4), s.zeros(4)
		s.rloop(n, []ptr{x}, 2, func(j int) {
			for h := 0; h < 2; h++ {
				d := s.load64(src, x, j, h)
				VSUBPD(kv, d, d)
				VADDPD(d, s1[2*j+h], s1[2*j+h])
				VFMADD231PD(d, d, s2[2*j+h])
			}
		})
		r1 := s.fold(sum4(s1, addPD), true, addPD, addSD)
		r2 := s.fold(sum4(s2, addPD), true, addPD, addSD)
		VZEROUPPER()
		storeFloat(r1, ReturnIndex(0))
		storeFloat(r2, ReturnIndex(1))
		RET()

		name = "rdProd" + src.name + s.name
		text(name, "func(x *"+src.gotype+", n int) float64")
		Doc(name + " is the product of x[:n] in float64. n is a multiple of 16.")
		x = param("x", src.elem)
		n = loadInt("n")
		acc := make([]VecVirtual, 4)
		for i := range acc {
			acc[i] = s.load(cd(1))
		}
		s.rloop(n, []ptr{x}, 2, func(j int) {
			for h := 0; h < 2; h++ {
				VMULPD(s.load64(src, x, j, h), acc[2*j+h], acc[2*j+h])
			}
		})
		r := s.fold(sum4(acc, mulPD), true, mulPD, mulSD)
		VZEROUPPER()
		storeFloat(r, ReturnIndex(0))
		RET()
	}
}

// sumGroup is how many float32 vectors rdSumF32 adds in float32, as a
// pairwise tree, before it widens their sum to float64.
const sumGroup = 8

// genSumF32 is rdSumF32: the plain sum of float32 values, where widening
// every element to float64 (a conversion per half vector) held one Zen 4
// core to 58 GB/s from L1, L2 and L3 alike, against 100 GB/s from L2 and
// 75 from L3 for a loop that widened one sum of four vectors. Each lane
// first adds sumGroup elements in float32, a pairwise tree of depth three,
// then widens that to float64 accumulators, so the error is at most three
// float32 roundings of the magnitudes whatever n (the float64 adds after
// it are exact to 2^-53 per block), and a long input costs no more per
// element than a short one. Eight rather than four: the widening and
// float64 adds were half the loop's instructions, and with half as many
// of them the sums over the rows of a 4096x1024 matrix took 10% less time
// (an AMD EPYC, 1 and 2 threads, old and new binaries in turn, 4 rounds).
// Two groups per step keep four float64 chains in flight. The other forms
// widen every element: x² and |x| are not where time goes, and x² is
// exact only in float64.
//
// The AVX-512 kernel is the AVX2 one under its name: on Zen 4 the 256-bit
// loop streamed a 16 MB input from L3 at 73 GB/s against 63 GB/s for the
// 512-bit one (the same from L2, where both run at about 100 GB/s), and
// both levels then give the same bits.
func genSumF32(level *isa) {
	s := avx2
	name := "rdSumF32" + level.name
	text(name, "func(x *float32, n int) float64")
	Doc(name+" is the sum of x[:n], in float64 after float32 pairwise sums of", "eight elements per lane. n is a multiple of 16.")
	x := param("x", srcF32.elem)
	n := loadInt("n")
	acc := s.zeros(4)
	step := 2 * sumGroup * s.lanes
	Label("rblock")
	CMPQ(n, U32(step))
	JL(LabelRef("rgroup"))
	for g := 0; g < 2; g++ {
		s.sumGroupF32(x, g*sumGroup, acc[2*g:2*g+2])
	}
	ADDQ(U32(step*srcF32.elem), x.reg)
	SUBQ(U32(step), n)
	JMP(LabelRef("rblock"))
	// One group more where one is left, so a row of 64 to 127 elements
	// widens only its tail one vector at a time.
	Label("rgroup")
	CMPQ(n, U32(step/2))
	JL(LabelRef("rsingle"))
	s.sumGroupF32(x, 0, acc[:2])
	ADDQ(U32(step/2*srcF32.elem), x.reg)
	SUBQ(U32(step/2), n)
	// The last vectors (fewer than sumGroup), widened one by one.
	Label("rsingle")
	TESTQ(n, n)
	JE(LabelRef("rdone"))
	for h := 0; h < 2; h++ {
		VADDPD(s.load64(srcF32, x, 0, h), acc[h], acc[h])
	}
	ADDQ(U32(s.lanes*srcF32.elem), x.reg)
	SUBQ(U32(s.lanes), n)
	JMP(LabelRef("rsingle"))
	Label("rdone")
	r := s.fold(sum4(acc, addPD), true, addPD, addSD)
	VZEROUPPER()
	storeFloat(r, ReturnIndex(0))
	RET()
}

// sumGroupF32 adds the sumGroup float32 vectors from vector j of x as a
// pairwise tree (the second of each leaf pair read in the add) and widens
// the sum into the float64 accumulators acc[0] (low half) and acc[1].
func (s *isa) sumGroupF32(x ptr, j int, acc []VecVirtual) {
	level := make([]VecVirtual, sumGroup/2)
	for i := range level {
		level[i] = s.load(x.at((j + 2*i) * s.lanes))
		VADDPS(x.at((j+2*i+1)*s.lanes), level[i], level[i])
	}
	for len(level) > 1 {
		for i := 0; i < len(level)/2; i++ {
			VADDPS(level[2*i+1], level[2*i], level[2*i])
			level[i] = level[2*i]
		}
		level = level[:len(level)/2]
	}
	for h := 0; h < 2; h++ {
		VADDPD(s.widen64(level[0], h), acc[h], acc[h])
	}
}

// nanFlag collects the lanes that held NaN.
type nanFlag struct {
	s   *isa
	acc Register
}

func (s *isa) newNaNFlag() *nanFlag {
	if s.wide {
		k := K()
		KXORW(k, k, k)
		return &nanFlag{s, k}
	}
	return &nanFlag{s, s.zero()}
}

// add records the NaN lanes of v (float64 lanes when f64).
func (f *nanFlag) add(v VecVirtual, f64 bool) {
	var m Register
	if f64 {
		m = f.s.cmpPD(cmpUNORD, v, v)
	} else {
		m = f.s.cmp(cmpUNORD, v, v)
	}
	if f.s.wide {
		KORW(m, f.acc, f.acc)
	} else {
		VORPS(m, f.acc, f.acc)
	}
}

// store writes 1 to the bool result i when any lane held NaN.
func (f *nanFlag) store(i int) {
	r := GP32()
	if f.s.wide {
		KMOVW(f.acc, r)
	} else {
		VMOVMSKPS(f.acc, r)
	}
	TESTL(r, r)
	b := GP8()
	SETNE(b)
	Store(b, ReturnIndex(i))
}

func genExtremes(s *isa) {
	for _, src := range []*source{srcF32, srcF64} {
		f64 := src.elem == 8
		for _, e := range []struct {
			name string
			max  bool
			abs  bool
		}{{"Max", true, false}, {"Min", false, false}, {"MaxAbs", true, true}, {"MinAbs", false, true}} {
			name := "rd" + e.name + src.name + s.name
			text(name, "func(x *"+src.gotype+", n int) ("+src.gotype+", bool)")
			Doc(name+" is the "+e.name+" of x[:n], ignoring NaN, and whether x held",
				"NaN. The sign of a zero result is either's. n is a multiple of 16.")
			x := param("x", src.elem)
			n := loadInt("n")
			init := math.Inf(-1)
			if !e.max {
				init = math.Inf(1)
			}
			acc := make([]VecVirtual, 4)
			for i := range acc {
				if f64 {
					acc[i] = s.load(cd(init))
				} else {
					acc[i] = s.load(cf(float32(init)))
				}
			}
			nan := s.newNaNFlag()
			// The loop steps by a float32 vector: two float64 vectors.
			s.rloop(n, []ptr{x}, 2, func(j int) {
				for h := 0; h < 2; h++ {
					v := s.vec()
					if f64 {
						VMOVUPD(x.at(j*s.lanes+h*s.lanes/2), v)
					} else if h == 0 {
						VMOVUPS(x.at(j*s.lanes), v)
					} else {
						continue
					}
					if e.abs {
						if f64 {
							VANDPD(cq(math.MaxInt64), v, v)
						} else {
							VANDPS(cu(0x7fffffff), v, v)
						}
					}
					nan.add(v, f64)
					a := acc[2*j+h]
					switch {
					case f64 && e.max:
						VMAXPD(v, a, a)
					case f64:
						VMINPD(v, a, a)
					case e.max:
						VMAXPS(v, a, a)
					default:
						VMINPS(v, a, a)
					}
				}
			})
			vop, sop := extremeOps(f64, e.max)
			r := s.fold(sum4(acc, vop), f64, vop, sop)
			nan.store(1)
			VZEROUPPER()
			storeFloat(r, ReturnIndex(0))
			RET()
		}
	}
}

// extremeOps are the vector and scalar max or min of float32 or float64.
func extremeOps(f64, max bool) (vop, sop func(a, b, d Op)) {
	switch {
	case f64 && max:
		return func(a, b, d Op) { VMAXPD(a, b, d) }, func(a, b, d Op) { VMAXSD(a, b, d) }
	case f64:
		return func(a, b, d Op) { VMINPD(a, b, d) }, func(a, b, d Op) { VMINSD(a, b, d) }
	case max:
		return func(a, b, d Op) { VMAXPS(a, b, d) }, func(a, b, d Op) { VMAXSS(a, b, d) }
	}
	return func(a, b, d Op) { VMINPS(a, b, d) }, func(a, b, d Op) { VMINSS(a, b, d) }
}

// genArgExtremes emits the searches for the first largest (smallest)
// float32: each lane keeps its best value and the first index holding
// it; the Go side picks the best lane, the lowest index among ties, and
// looks for the first NaN itself when the kernel reports one.
func genArgExtremes(s *isa) {
	for _, max := range []bool{true, false} {
		name, pred, init := "rdArgMaxF32"+s.name, uint8(cmpGT), float32(math.Inf(-1))
		if !max {
			name, pred, init = "rdArgMinF32"+s.name, cmpLT, float32(math.Inf(1))
		}
		text(name, "func(x *float32, n int, best *float32, idx *int32) bool")
		Doc(name+" leaves in best and idx (one entry per lane) each lane's best",
			"value of x[:n] and its first index, and reports whether x held NaN.",
			"n is a multiple of 16.")
		x := param("x", 4)
		n := loadInt("n")
		bp, ip := param("best", 4), param("idx", 4)
		bv, iv, cur := s.load(cf(init)), s.load(laneIndex()), s.load(laneIndex())
		nan := s.newNaNFlag()
		s.rloop(n, []ptr{x}, 1, func(int) {
			v := s.load(x.at(0))
			nan.add(v, false)
			m := s.cmp(pred, v, bv)
			s.blendInto(m, v, bv)
			s.blendInto(m, cur, iv)
			VPADDD(cu(uint32(s.lanes)), cur, cur)
		})
		VMOVUPS(bv, bp.at(0))
		VMOVUPS(iv, ip.at(0))
		nan.store(0)
		VZEROUPPER()
		RET()
	}
}

// colForms are the column updates acc[i] += f(x[i]) (sumForms).
func genColumns(s *isa) {
	for _, src := range []*source{srcF32, srcF64} {
		for _, f := range sumForms {
			name := "rdCol" + f.name + src.name + s.name
			text(name, "func(acc *float64, x *"+src.gotype+", n int)")
			Doc(name + " adds " + f.doc + " of x[i] to acc[i] for i < n (a multiple of 16).")
			acc, x := param("acc", 8), param("x", src.elem)
			n := loadInt("n")
			s.rloop(n, []ptr{acc, x}, 2, func(j int) {
				for h := 0; h < 2; h++ {
					a := s.load(acc.at(j*s.lanes + h*s.lanes/2))
					s.addForm(f.name, s.load64(src, x, j, h), a)
					VMOVUPD(a, acc.at(j*s.lanes+h*s.lanes/2))
				}
			})
			VZEROUPPER()
			RET()
		}

		name := "rdColShift" + src.name + s.name
		text(name, "func(s1, s2, k *float64, x *"+src.gotype+", n int)")
		Doc(name+" adds d and d² to s1[i] and s2[i], d = x[i] - k[i], for i < n",
			"(a multiple of 16).")
		p1, p2, pk, x := param("s1", 8), param("s2", 8), param("k", 8), param("x", src.elem)
		n := loadInt("n")
		s.rloop(n, []ptr{p1, p2, pk, x}, 2, func(j int) {
			for h := 0; h < 2; h++ {
				e := j*s.lanes + h*s.lanes/2
				d := s.load64(src, x, j, h)
				VSUBPD(pk.at(e), d, d)
				a1, a2 := s.load(p1.at(e)), s.load(p2.at(e))
				VADDPD(d, a1, a1)
				VFMADD231PD(d, d, a2)
				VMOVUPD(a1, p1.at(e))
				VMOVUPD(a2, p2.at(e))
			}
		})
		VZEROUPPER()
		RET()
	}
	for _, max := range []bool{true, false} {
		name, pred := "rdColArgMaxF32"+s.name, uint8(cmpGT)
		if !max {
			name, pred = "rdColArgMinF32"+s.name, cmpLT
		}
		text(name, "func(best *float32, idx *int32, x *float32, j int, n int)")
		Doc(name+" replaces best[i] by x[i] and idx[i] by j where x[i] is better,",
			"or NaN while best[i] is not, for i < n (a multiple of 16).")
		bp, ip, x := param("best", 4), param("idx", 4), param("x", 4)
		jr := loadInt("j")
		jx, jv := XMM(), s.vec()
		VMOVD(jr.As32(), jx)
		VPBROADCASTD(jx, jv)
		n := loadInt("n")
		s.rloop(n, []ptr{bp, ip, x}, 1, func(int) {
			v, b := s.load(x.at(0)), s.load(bp.at(0))
			better := s.cmp(pred, v, b)
			newNaN := s.and(s.cmp(cmpUNORD, v, v), s.cmp(cmpORD, b, b))
			m := s.or(better, newNaN)
			VMOVUPS(s.blend(m, v, b), bp.at(0))
			VMOVUPS(s.blend(m, jv, s.load(ip.at(0))), ip.at(0))
		})
		VZEROUPPER()
		RET()
	}
}

// genIntSums emits exact (wrapping) int64 sums of int32 and int64 rows.
func genIntSums(s *isa) {
	for _, w := range []int{4, 8} {
		name, gotype := "rdSumI32"+s.name, "int32"
		if w == 8 {
			name, gotype = "rdSumI64"+s.name, "int64"
		}
		text(name, "func(x *"+gotype+", n int) int64")
		Doc(name + " is the wrapping int64 sum of x[:n] (a multiple of 16).")
		x := param("x", w)
		n := loadInt("n")
		acc := s.zeros(4)
		s.rloop(n, []ptr{x}, 2, func(j int) {
			for h := 0; h < 2; h++ {
				m := x.at(j*s.lanes + h*s.lanes/2)
				a := acc[2*j+h]
				if w == 8 {
					VPADDQ(m, a, a)
					continue
				}
				v := s.vec()
				VPMOVSXDQ(m, v)
				VPADDQ(v, a, a)
			}
		})
		addQ := func(a, b, d Op) { VPADDQ(a, b, d) }
		v := sum4(acc, addQ)
		y := v
		if s.wide {
			hi := YMM()
			VEXTRACTI64X4(U8(1), v, hi)
			y = YMM()
			VPADDQ(hi, v.AsY(), y)
		}
		hx, t := XMM(), XMM()
		VEXTRACTI128(U8(1), y, hx)
		VPADDQ(hx, y.AsX(), t)
		u := XMM()
		VPSHUFD(U8(0x4e), t, u)
		VPADDQ(u, t, t)
		r := GP64()
		VMOVQ(t, r)
		VZEROUPPER()
		Store(r, ReturnIndex(0))
		RET()
	}
}

// genDotF32 writes rdDotF32, the float32 dot product that matrix-vector
// products (the CPU's gemvF32: a decoder step's every linear layer and LM
// head) run on: they stream their matrix once, and the scalar Go loop
// they had kept a core at about one element a cycle, below what memory
// delivers. Four vector FMA chains, summed in a fixed order, so a row's
// result does not depend on where the row starts.
func genDotF32(s *isa) {
	name := "rdDotF32" + s.name
	text(name, "func(x *float32, y *float32, n int) float32")
	Doc(name+" is the float32 dot product of x[:n] and y[:n] in four vector",
		"accumulators. n is a multiple of 16.")
	x, y := param("x", srcF32.elem), param("y", srcF32.elem)
	n := loadInt("n")
	acc := s.zeros(4)
	s.rloop(n, []ptr{x, y}, 4, func(j int) {
		VFMADD231PS(x.at(j*s.lanes), s.load(y.at(j*s.lanes)), acc[j])
	})
	r := s.fold(sum4(acc, addPS), false, addPS, addSS)
	VZEROUPPER()
	storeFloat(r, ReturnIndex(0))
	RET()
}
