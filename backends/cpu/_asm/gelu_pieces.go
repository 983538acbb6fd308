package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gelu's fast path with AVX-512. Most of what gelu sees lies within a few
// units of 0 (activations are normalised), and there Φ is smooth enough
// for a piecewise polynomial: 16 pieces of width 0.375 centred at
// (i - 8)·0.375, one degree-6 polynomial each in v = x - centre
// (fits.py: 0.14 ulp of Φ, gelu within 2 ulps), its coefficients picked
// per lane by VPERMPS from a 16-entry table. About 19 instructions a
// vector where the general path (gaussTail's exp and division) takes 31.
// Lanes outside about [-3.09, 2.81] (and NaN) take the general path, which
// runs only for the vectors that have such a lane: the speed depends on
// the data (with normal inputs about one vector in twenty has one), the
// result of a lane only on its own x.

const (
	geluPieceWidth = 0.375
	geluPieceBase  = 8 + 1<<23 // x/width + base rounds to 2^23 + piece
)

// geluPieces[d][i] is the coefficient of v^d on piece i (fits.py prints it).
var geluPieces = [7][16]float32{
	{0.0013498980551958084, 0.004332448355853558, 0.012224473059177399, 0.030396360903978348, 0.06680720299482346, 0.13029451668262482, 0.22662734985351562, 0.3538302481174469, 0.5, 0.6461697816848755, 0.7733726501464844, 0.8697054982185364, 0.933192789554596, 0.9696036577224731, 0.9877755045890808, 0.995667576789856},
	{0.00443184794858098, 0.012724180705845356, 0.031739652156829834, 0.06878627836704254, 0.1295175999403, 0.21187664568424225, 0.30113744735717773, 0.37185508012771606, 0.3989422619342804, 0.37185508012771606, 0.30113744735717773, 0.21187664568424225, 0.1295175999403, 0.06878627836704254, 0.031739652156829834, 0.012724180705845356},
	{0.006647775415331125, 0.016700496897101402, 0.03570711612701416, 0.06448713690042496, 0.0971381887793541, 0.1191805973649025, 0.11292652785778046, 0.06972283124923706, 1.2249722125545759e-08, -0.06972281634807587, -0.11292653530836105, -0.11918061226606369, -0.09713820368051529, -0.06448713690042496, -0.03570710867643356, -0.016700487583875656},
	{0.005909221712499857, 0.012492473237216473, 0.02149067260324955, 0.02884005941450596, 0.02698221616446972, 0.009379029273986816, -0.02195831388235092, -0.053259752690792084, -0.06648904830217361, -0.05325975641608238, -0.02195832133293152, 0.009379014372825623, 0.026982204988598824, 0.02884005941450596, 0.021490683779120445, 0.012492486275732517},
	{0.0033237135503441095, 0.005414064507931471, 0.006136438809335232, 0.0027706767432391644, -0.00607046764343977, -0.017223969101905823, -0.02293715439736843, -0.016613654792308807, -9.094902679862571e-07, 0.016612622886896133, 0.022937718778848648, 0.017225472256541252, 0.0060715763829648495, -0.002770631108433008, -0.0061370995827019215, -0.0054147024638950825},
	{0.0011027557775378227, 0.0009548689122311771, -0.0004780299204867333, -0.003285770770162344, -0.005834037903696299, -0.005230533424764872, -0.000125799750094302, 0.006701671052724123, 0.009899345226585865, 0.0067016794346272945, -0.00012564008648041636, -0.005230212118476629, -0.0058337911032140255, -0.003285794286057353, -0.00047831027768552303, 0.00095459254225716},
	{0.00011221983731957152, -0.0002896247897297144, -0.0009766747243702412, -0.001385436742566526, -0.0006628744886256754, 0.00128010637126863, 0.003008280647918582, 0.0026237373240292072, 1.6882615454960614e-05, -0.0026045734994113445, -0.003018805989995599, -0.0013080507051199675, 0.0006422523292712867, 0.0013845704961568117, 0.0009890192886814475, 0.0003015479596797377},
}

// geluPiecesSymbol names the tables' data: row d at offset 64·d.
const geluPiecesSymbol = "ewGeluPieces"

func emitGeluPieces() {
	GLOBL(geluPiecesSymbol, RODATA|NOPTR)
	for d, row := range geluPieces {
		for i, c := range row {
			DATA(64*d+4*i, U32(math.Float32bits(c)))
		}
	}
}

// geluWideBody writes gelu(x) to dst: the pieces for the lanes in their
// range, the general path for the others (computed only when a vector has
// some), so that each lane's result depends on its own x alone. n makes
// the labels unique.
func (s *isa) geluWideBody(x VecVirtual, dst Mem, n int) {
	slow, join := fmt.Sprintf("gelu_slow_%d", n), fmt.Sprintf("gelu_join_%d", n)
	// m = round(x/width + base): its low four bits are the piece, and it
	// is 2^23 + piece exactly when x is in range (past it, m's bits leave
	// [2^23, 2^23 + 16): below 2^23 floats are not integers, NaN and
	// infinities are not near).
	m := s.load(cf(1 / geluPieceWidth))
	VFMADD213PS(cf(geluPieceBase), x, m)
	off := s.vec()
	VPSUBD(cu(math.Float32bits(geluPieceBase-8)), m, off)
	out := K()
	VPCMPUD(U8(5), cu(16), off, out) // off >= 16 unsigned: out of range
	// v = x - centre, with centre = m·width - base·width exact in one FMA.
	v := s.load(cf(geluPieceWidth))
	VFMADD213PS(cf(-geluPieceBase*geluPieceWidth), m, v)
	VSUBPS(v, x, v)
	table := func(d int) Mem {
		return Mem{Symbol: NewStaticSymbol(geluPiecesSymbol), Base: StaticBase, Disp: 64 * d}
	}
	p := s.vec()
	VPERMPS(table(6), m, p)
	for d := 5; d >= 0; d-- {
		c := s.vec()
		VPERMPS(table(d), m, c)
		VFMADD213PS(c, v, p) // p = v·p + c
	}
	VMULPS(x, p, p)
	KORTESTW(out, out)
	JNE(LabelRef(slow))
	VMOVUPS(p, dst)
	JMP(LabelRef(join))
	Label(slow)
	VMOVUPS(s.blend(out, s.gelu(x), p), dst)
	Label(join)
}
