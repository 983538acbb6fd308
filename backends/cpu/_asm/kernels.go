package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Streaming kernels: binary arithmetic, comparisons, where and casts. Each
// takes n, a multiple of 16 elements (the Go side finishes a tail through a
// padded buffer), and operands that are full arrays or, where an inc
// parameter says 0, a buffer of one repeated value.

// binaryOp emits dst = a op b into d.
type binaryOp func(s *isa, a VecVirtual, b Mem, d VecVirtual)

// extremum is PyTorch's maximum/minimum: NaN from either side wins, a tie
// keeps a (maximum(-0, 0) is -0). VMAXPS/VMINPS return their second operand
// on NaN or a tie, so a goes second and a NaN b is blended back in.
func extremum(minimum bool) binaryOp {
	return func(s *isa, a VecVirtual, b Mem, d VecVirtual) {
		bv := s.load(b)
		r := s.vec()
		if minimum {
			VMINPS(a, bv, r) // b < a ? b : a
		} else {
			VMAXPS(a, bv, r) // b > a ? b : a
		}
		nan := s.cmp(cmpUNORD, bv, bv)
		VMOVUPS(s.blend(nan, bv, r), d)
	}
}

var floatBinary = []struct {
	name   string
	op     binaryOp
	unroll int
}{
	{"Add", func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VADDPS(b, a, d) }, 4},
	{"Sub", func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VSUBPS(b, a, d) }, 4},
	{"Mul", func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VMULPS(b, a, d) }, 4},
	{"Div", func(s *isa, a VecVirtual, b Mem, d VecVirtual) { VDIVPS(b, a, d) }, 4},
	{"Max", extremum(false), 4},
	{"Min", extremum(true), 4},
	// gelu's backward: the incoming gradient a times the slope at b.
	{"GeluGrad", func(s *isa, g VecVirtual, x Mem, d VecVirtual) { VMULPS(s.geluSlope(s.load(x)), g, d) }, 1},
	{"GeluTanhGrad", func(s *isa, g VecVirtual, x Mem, d VecVirtual) { VMULPS(s.geluTanhSlope(s.load(x)), g, d) }, 1},
}

// streamingBinary names the first ops of floatBinary, the memory-bound
// ones, which also get a kernel with non-temporal stores (outputStore).
var streamingBinary = []string{"Add", "Sub", "Mul", "Div"}

// outputStore is how a kernel writes its result vectors. The streaming
// kind stores around the caches (VMOVNTPS): for an op whose operands and
// output outgrow the last-level cache, a cached store first reads each
// output line it will overwrite (a third more memory traffic for a binary
// op), and the line is evicted before a later op could read it. Its
// kernels take dst aligned to 64 bytes and are named with NT; the SFENCE
// orders the weakly ordered stores before the kernel returns, so the
// pool's hand-off publishes them like any other store.
type outputStore struct{ streaming bool }

var cachedStores, streamingStores = outputStore{false}, outputStore{true}

// kernel is the kernel name for op on s's instruction set.
func (o outputStore) kernel(s *isa, op string) string {
	if o.streaming {
		return "ew" + op + "F32NT" + s.name
	}
	return "ew" + op + "F32" + s.name
}

// doc is the kernel's comment: what it computes, or for a streaming
// kernel, which kernel it repeats.
func (o outputStore) doc(s *isa, op, what string) string {
	if o.streaming {
		return o.kernel(s, op) + " is " + cachedStores.kernel(s, op) + " with non-temporal stores; dst is 64-byte aligned."
	}
	return o.kernel(s, op) + " " + what
}

func (o outputStore) store(v VecVirtual, m Mem) {
	if o.streaming {
		VMOVNTPS(v, m)
		return
	}
	VMOVUPS(v, m)
}

// ret ends a kernel, fenced after streaming stores.
func (o outputStore) ret() {
	if o.streaming {
		SFENCE()
	}
	RET()
}

// genFloatBinary writes op's kernel, dst[i] = a[i] op b[i].
func genFloatBinary(s *isa, name string, op binaryOp, unroll int, out outputStore) {
	TEXT(out.kernel(s, name), NOSPLIT, "func(dst *float32, a *float32, ai int, b *float32, bi int, n int)")
	Pragma("noescape")
	Doc(out.doc(s, name, "sets dst[i] = a[i] "+name+" b[i]; ai and bi are 4 bytes per element or 0 for a broadcast buffer."))
	dst, a, b := arrayParam("dst", 4), broadcastParam("a", "ai", 4), broadcastParam("b", "bi", 4)
	n := GP64()
	Load(Param("n"), n)
	s.loops(n, []*stream{dst, a, b}, unroll, func(j int) {
		av, d := s.load(a.at(s, j)), s.vec()
		op(s, av, b.at(s, j), d)
		out.store(d, dst.at(s, j))
	})
	out.ret()
}

// intBinary are the integer ops with a vector instruction on both sets
// (AVX2 has no 64-bit multiply).
var intBinary = []struct {
	name string
	elem int
	op   func(b, a, d Op)
}{
	{"AddI32", 4, func(b, a, d Op) { VPADDD(b, a, d) }},
	{"SubI32", 4, func(b, a, d Op) { VPSUBD(b, a, d) }},
	{"MulI32", 4, func(b, a, d Op) { VPMULLD(b, a, d) }},
	{"AddI64", 8, func(b, a, d Op) { VPADDQ(b, a, d) }},
	{"SubI64", 8, func(b, a, d Op) { VPSUBQ(b, a, d) }},
}

func genBinary(s *isa) {
	for _, op := range floatBinary {
		genFloatBinary(s, op.name, op.op, op.unroll, cachedStores)
	}
	for _, op := range floatBinary[:len(streamingBinary)] {
		genFloatBinary(s, op.name, op.op, op.unroll, streamingStores)
	}
	for _, op := range intBinary {
		TEXT("ew"+op.name+s.name, NOSPLIT, "func(dst, a *byte, ai int, b *byte, bi int, n int)")
		Pragma("noescape")
		Doc("ew" + op.name + s.name + " is the wrapping integer op over n elements; ai and bi are the element size or 0 for a broadcast buffer.")
		// The loops count float32 lanes: express n in 4-byte units.
		dst, a, b := arrayParam("dst", 4), broadcastParam("a", "ai", 4), broadcastParam("b", "bi", 4)
		n := GP64()
		Load(Param("n"), n)
		if op.elem == 8 {
			SHLQ(U8(1), n)
			SHRQ(U8(1), a.inc.(GPVirtual))
			SHRQ(U8(1), b.inc.(GPVirtual))
		}
		s.loops(n, []*stream{dst, a, b}, 4, func(j int) {
			av, d := s.load(a.at(s, j)), s.vec()
			op.op(b.at(s, j), av, d)
			VMOVUPS(d, dst.at(s, j))
		})
		RET()
	}
}

// Comparisons write one byte, 0 or 1, per element; lt and le are gt and
// ge with the operands swapped.
var comparisons = []struct {
	name string
	pred uint8
}{
	{"Eq", cmpEQ}, {"Ne", cmpNEQU}, {"Gt", cmpGT}, {"Ge", cmpGE},
}

func genCompare(s *isa) {
	for _, c := range comparisons {
		TEXT("ewCmp"+c.name+"F32"+s.name, NOSPLIT, "func(dst *byte, a *float32, ai int, b *float32, bi int, n int)")
		Pragma("noescape")
		Doc("ewCmp" + c.name + "F32" + s.name + " sets dst[i] to 1 where a[i] " + c.name + " b[i], else 0.")
		dst, a, b := arrayParam("dst", 1), broadcastParam("a", "ai", 4), broadcastParam("b", "bi", 4)
		n := GP64()
		Load(Param("n"), n)
		s.loops(n, []*stream{dst, a, b}, 4, func(j int) {
			m := s.cmp(c.pred, s.load(a.at(s, j)), b.at(s, j))
			s.storeBytes(m, dst.at(s, j))
		})
		RET()
	}
}

// storeBytes writes a mask as one byte (0 or 1) per lane.
func (s *isa) storeBytes(m Register, out Mem) {
	if s.wide {
		x := XMM()
		VMOVDQU8_Z(cu(0x01010101), m, x)
		VMOVDQU(x, out)
		return
	}
	y := m.(VecVirtual)
	hi, w := XMM(), XMM()
	VEXTRACTF128(U8(1), y, hi)
	VPACKSSDW(hi, y.AsX(), w) // 8 words, lanes in order
	VPACKSSWB(w, w, w)        // 8 bytes of 0 or -1
	VPAND(cu(0x01010101), w, w)
	VMOVQ(w, out)
}

func genWhere(s *isa) {
	TEXT("ewWhereF32"+s.name, NOSPLIT, "func(dst *float32, c *byte, a *float32, ai int, b *float32, bi int, n int)")
	Pragma("noescape")
	Doc("ewWhereF32" + s.name + " sets dst[i] = c[i] != 0 ? a[i] : b[i].")
	dst, c := arrayParam("dst", 4), arrayParam("c", 1)
	a, b := broadcastParam("a", "ai", 4), broadcastParam("b", "bi", 4)
	n := GP64()
	Load(Param("n"), n)
	s.loops(n, []*stream{dst, c, a, b}, 4, func(j int) {
		cv := s.vec()
		VPMOVZXBD(c.at(s, j), cv)
		av, bv := s.load(a.at(s, j)), s.load(b.at(s, j))
		var r VecVirtual
		if s.wide {
			k := K()
			VPTESTMD(cv, cv, k)
			r = s.blend(k, av, bv)
		} else {
			zero := YMM()
			VPXOR(zero, zero, zero)
			VPCMPEQD(zero, cv, cv) // all ones where c is 0
			r = s.blend(cv, bv, av)
		}
		VMOVUPS(r, dst.at(s, j))
	})
	RET()
}

func genCasts(s *isa) {
	// f32 -> f16 and back with F16C, rounding to nearest even as numerics.F16Bits.
	genCast(s, "ewF32ToF16", "uint16", "float32", "converts to IEEE half precision, rounding to nearest even.", func(dst, src *stream, j int) {
		v := s.load(src.at(s, j))
		VCVTPS2PH(U8(0), v, dst.at(s, j))
	})

	genCast(s, "ewF16ToF32", "float32", "uint16", "widens IEEE half precision (exact).", func(dst, src *stream, j int) {
		v := s.vec()
		VCVTPH2PS(src.at(s, j), v)
		VMOVUPS(v, dst.at(s, j))
	})

	// bf16 is the top half of a float32, rounded to nearest even as
	// numerics.BF16Bits does: add 0x7fff plus the lowest kept bit; NaN keeps
	// its top bits with the quiet bit set.
	genCast(s, "ewF32ToBF16", "uint16", "float32", "rounds to bfloat16, nearest even; NaN stays NaN.", func(dst, src *stream, j int) {
		u := s.load(src.at(s, j))
		lsb, r := s.vec(), s.vec()
		VPSRLD(U8(16), u, lsb)
		s.pand(cu(1), lsb, lsb)
		VPADDD(cu(0x7fff), u, r)
		VPADDD(lsb, r, r)
		VPSRLD(U8(16), r, r)
		q := s.vec()
		VPSRLD(U8(16), u, q)
		s.por(cu(0x40), q, q)
		nan := s.cmp(cmpUNORD, u, u)
		r = s.blend(nan, q, r)
		s.narrow32To16(r, dst.at(s, j))
	})

	genCast(s, "ewBF16ToF32", "float32", "uint16", "widens bfloat16 (exact).", func(dst, src *stream, j int) {
		v := s.vec()
		VPMOVZXWD(src.at(s, j), v)
		VPSLLD(U8(16), v, v)
		VMOVUPS(v, dst.at(s, j))
	})

	// f32 -> i32 as numerics.FloatToInt: truncate, NaN to 0, saturate.
	// VCVTTPS2DQ gives 0x80000000 for NaN and both overflows, which is
	// already right below the range.
	genCast(s, "ewF32ToI32", "int32", "float32", "truncates toward zero, saturating; NaN becomes 0.", func(dst, src *stream, j int) {
		x := s.load(src.at(s, j))
		r := s.vec()
		VCVTTPS2DQ(x, r)
		over := s.cmp(cmpGE, x, cf(2147483648))
		r = s.blend(over, cu(0x7fffffff), r)
		nan := s.cmp(cmpUNORD, x, x)
		r = s.blend(nan, s.zero(), r)
		VMOVUPS(r, dst.at(s, j))
	})

	genCast(s, "ewI32ToF32", "float32", "int32", "converts, rounding to nearest even.", func(dst, src *stream, j int) {
		v := s.vec()
		VCVTDQ2PS(src.at(s, j), v)
		VMOVUPS(v, dst.at(s, j))
	})
}

// genCast writes conversion kernel name (func(dst *dt, src *st, n int))
// with its doc line: the prologue every cast shares, then body for each
// vector j of the loop.
func genCast(s *isa, name, dt, st, doc string, body func(dst, src *stream, j int)) {
	size := map[string]int{"uint16": 2, "int32": 4, "float32": 4}
	TEXT(name+s.name, NOSPLIT, "func(dst *"+dt+", src *"+st+", n int)")
	Pragma("noescape")
	Doc(name + s.name + " " + doc)
	dst, src := arrayParam("dst", size[dt]), arrayParam("src", size[st])
	n := GP64()
	Load(Param("n"), n)
	s.loops(n, []*stream{dst, src}, 4, func(j int) { body(dst, src, j) })
	RET()
}

// narrow32To16 stores the low 16 bits of each 32-bit lane.
func (s *isa) narrow32To16(v VecVirtual, out Mem) {
	if s.wide {
		VPMOVDW(v, out)
		return
	}
	hi, w := XMM(), XMM()
	VEXTRACTI128(U8(1), v, hi)
	VPACKUSDW(hi, v.AsX(), w) // values fit 16 bits: no saturation
	VMOVDQU(w, out)
}

// pand, por and pxor are the bitwise ops on integer lanes (AVX-512 has
// only the element-sized EVEX forms).
func (s *isa) pand(a, b, d Op) {
	if s.wide {
		VPANDD(a, b, d)
	} else {
		VPAND(a, b, d)
	}
}

func (s *isa) por(a, b, d Op) {
	if s.wide {
		VPORD(a, b, d)
	} else {
		VPOR(a, b, d)
	}
}

func (s *isa) pxor(a, b, d Op) {
	if s.wide {
		VPXORD(a, b, d)
	} else {
		VPXOR(a, b, d)
	}
}

// zero is a new register of zeros.
func (s *isa) zero() VecVirtual {
	z := s.vec()
	s.pxor(z, z, z)
	return z
}
