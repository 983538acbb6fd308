package cpu

import (
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// Integer and bit-select fast paths: i32 and i64 arithmetic and
// comparisons in their own type (the general path widens every operand
// into an int64 copy first), and where on any dtype as a select of bit
// patterns. They take dense or single-value operands; other layouts go
// the general way.

type intElem interface{ ~int32 | ~int64 }

// flatSteps reports whether p is one run with every input dense or a
// single value.
func (p *ewPlan) flatSteps(ins int) bool {
	if !p.flat {
		return false
	}
	for s := range ins {
		if p.steps[s] > 1 {
			return false
		}
	}
	return true
}

// binaryInt runs add, sub, mul, maximum and minimum on i32 or i64 inputs
// and output of one dtype, wrapping like the dtype; it reports false for
// anything else.
func binaryInt(op ewBin, a, b, out *core.Tensor) bool {
	d := out.DType()
	if (d != core.I32 && d != core.I64) || a.DType() != d || b.DType() != d ||
		(op != binAdd && op != binSub && op != binMul && op != binMax && op != binMin) {
		return false
	}
	p := newEwPlan(out, a, b)
	if !p.flatSteps(2) {
		return false
	}
	t := intTask{bin: op, d: d, a: host(a), b: host(b), out: host(out)}
	if p.inline(1) {
		t.run(p.base, p.steps, p.n)
	} else {
		p.run(1, t.run)
	}
	return true
}

// intTask is one i32 or i64 op, arithmetic (bin) or a comparison (cmp),
// over dense or single-value operands.
type intTask struct {
	bin       ewBin
	cmp       ewCmp
	compare   bool
	d         core.DType
	a, b, out []byte
}

func (t intTask) run(pos, steps [4]int, m int) {
	if m == 0 {
		return
	}
	an, bn := max(m*steps[0], 1), max(m*steps[1], 1)
	switch {
	case t.compare && t.d == core.I32:
		cmpInt(t.cmp, t.out[pos[2]:pos[2]+m], i32view(t.a)[pos[0]:pos[0]+an], i32view(t.b)[pos[1]:pos[1]+bn])
	case t.compare:
		cmpInt(t.cmp, t.out[pos[2]:pos[2]+m], i64view(t.a)[pos[0]:pos[0]+an], i64view(t.b)[pos[1]:pos[1]+bn])
	case t.d == core.I32:
		binInt(t.bin, i32view(t.out)[pos[2]:pos[2]+m], i32view(t.a)[pos[0]:pos[0]+an], i32view(t.b)[pos[1]:pos[1]+bn])
	default:
		binInt(t.bin, i64view(t.out)[pos[2]:pos[2]+m], i64view(t.a)[pos[0]:pos[0]+an], i64view(t.b)[pos[1]:pos[1]+bn])
	}
}

// intKernelFor is the vector kernel of op on T, or intBinCount.
func intKernelFor[T intElem](op ewBin) ewIntBin {
	long := unsafe.Sizeof(T(0)) == 8
	switch {
	case simdLevel == simdNone:
	case op == binAdd && !long:
		return intAdd32
	case op == binSub && !long:
		return intSub32
	case op == binMul && !long:
		return intMul32
	case op == binAdd:
		return intAdd64
	case op == binSub:
		return intSub64
	}
	return intBinCount
}

// binInt is binF32 for integers: a and b have len(dst) elements or one.
func binInt[T intElem](op ewBin, dst, a, b []T) {
	n := len(dst)
	k := intKernelFor[T](op)
	if k == intBinCount || n == 0 {
		binIntGo(op, dst, a, b)
		return
	}
	size := int(unsafe.Sizeof(T(0)))
	const lanes = ewBroadcast * 4 / 8 // a broadcast buffer of 256 bytes in either width
	var ab, bb [lanes * 2]T
	operand := func(v []T, buf []T) (*byte, int) {
		if len(v) == 1 {
			for i := range buf {
				buf[i] = v[0]
			}
			return (*byte)(unsafe.Pointer(&buf[0])), 0
		}
		return (*byte)(unsafe.Pointer(&v[0])), size
	}
	ap, ai := operand(a, ab[:])
	bp, bi := operand(b, bb[:])
	body := n &^ (ewLanes - 1)
	if body > 0 {
		vecInt(wide(), k, (*byte)(unsafe.Pointer(&dst[0])), ap, ai, bp, bi, body)
	}
	if body < n {
		var at, bt, ot [ewLanes]T
		if ai != 0 {
			copy(at[:], a[body:])
			ap = (*byte)(unsafe.Pointer(&at[0]))
		}
		if bi != 0 {
			copy(bt[:], b[body:])
			bp = (*byte)(unsafe.Pointer(&bt[0]))
		}
		vecInt(wide(), k, (*byte)(unsafe.Pointer(&ot[0])), ap, ai, bp, bi, ewLanes)
		copy(dst[body:], ot[:])
	}
}

func binIntGo[T intElem](op ewBin, dst, a, b []T) {
	am, bm := min(len(a)-1, 1), min(len(b)-1, 1)
	switch op {
	case binAdd, binSub, binMul:
		binArithGo(op, dst, a, b)
	case binMax:
		for i := range dst {
			dst[i] = max(a[i*am], b[i*bm])
		}
	case binMin:
		for i := range dst {
			dst[i] = min(a[i*am], b[i*bm])
		}
	}
}

// compareInt compares i32 or i64 inputs of one dtype into bool; it
// reports false for anything else.
func compareInt(op ewCmp, a, b, out *core.Tensor) bool {
	d := a.DType()
	if (d != core.I32 && d != core.I64) || b.DType() != d || out.DType() != core.Bool {
		return false
	}
	p := newEwPlan(out, a, b)
	if !p.flatSteps(2) {
		return false
	}
	t := intTask{cmp: op, compare: true, d: d, a: host(a), b: host(b), out: host(out)}
	if p.inline(1) {
		t.run(p.base, p.steps, p.n)
	} else {
		p.run(1, t.run)
	}
	return true
}

func cmpInt[T intElem](op ewCmp, dst []byte, a, b []T) {
	if op == cmpLt || op == cmpLe {
		a, b = b, a
		op += cmpGt - cmpLt
	}
	cmpGo(op, dst, a, b)
}

type bitsElem interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// whereFast selects with a dense bool condition of the output's size
// between dense or single-value operands of the output's dtype; it
// reports false for anything else. f32 runs the vector kernel, other
// dtypes select bit patterns (exact for every dtype, NaN payloads and -0
// included).
func whereFast(cond, a, b, out *core.Tensor) bool {
	d := out.DType()
	if cond.DType() != core.Bool || a.DType() != d || b.DType() != d {
		return false
	}
	p := newEwPlan(out, cond, a, b)
	if !p.flatSteps(3) || p.steps[0] != 1 {
		return false
	}
	t := whereTask{d: d, c: host(cond), a: host(a), b: host(b), out: host(out)}
	if p.inline(1) {
		t.run(p.base, p.steps, p.n)
	} else {
		p.run(1, t.run)
	}
	return true
}

// whereTask is one where over a dense condition and dense or single-value
// operands.
type whereTask struct {
	d            core.DType
	c, a, b, out []byte
}

func (t whereTask) run(pos, steps [4]int, m int) {
	if m == 0 {
		return
	}
	c := t.c[pos[0] : pos[0]+m]
	an, bn := max(m*steps[1], 1), max(m*steps[2], 1)
	switch t.d.Size() {
	case 1:
		whereBits(t.out[pos[3]:pos[3]+m], c, t.a[pos[1]:pos[1]+an], t.b[pos[2]:pos[2]+bn])
	case 2:
		whereBits(u16view(t.out)[pos[3]:pos[3]+m], c, u16view(t.a)[pos[1]:pos[1]+an], u16view(t.b)[pos[2]:pos[2]+bn])
	case 4:
		if t.d == core.F32 {
			whereF32(f32view(t.out)[pos[3]:pos[3]+m], c, f32view(t.a)[pos[1]:pos[1]+an], f32view(t.b)[pos[2]:pos[2]+bn])
			return
		}
		whereBits(u32view(t.out)[pos[3]:pos[3]+m], c, u32view(t.a)[pos[1]:pos[1]+an], u32view(t.b)[pos[2]:pos[2]+bn])
	default:
		whereBits(u64view(t.out)[pos[3]:pos[3]+m], c, u64view(t.a)[pos[1]:pos[1]+an], u64view(t.b)[pos[2]:pos[2]+bn])
	}
}

func whereBits[T bitsElem](dst []T, c []byte, a, b []T) {
	am, bm := min(len(a)-1, 1), min(len(b)-1, 1)
	for i := range dst {
		if c[i] != 0 {
			dst[i] = a[i*am]
		} else {
			dst[i] = b[i*bm]
		}
	}
}

func u32view(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func u64view(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}
