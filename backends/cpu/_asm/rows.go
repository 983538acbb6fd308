package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

// Row kernels of softmax, the normalisations and their backward passes,
// over float32 rows. Each is one step of its op, on a row short enough to
// stay in cache between steps: the sums (exp, dot products) accumulate in
// float64 as the reductions do, the elementwise steps compute in float32
// with a multiply and an add where the Go loops have them (no FMA), so
// that both round alike. n is a multiple of 16: the Go side runs a tail
// through a padded buffer.

// scalarF32 broadcasts a float32 parameter.
func (s *isa) scalarF32(name string) VecVirtual {
	x := XMM()
	loadFloat(name, x)
	v := s.vec()
	VBROADCASTSS(x, v)
	return v
}

// scalarF64 broadcasts a float64 parameter.
func (s *isa) scalarF64(name string) VecVirtual {
	x := XMM()
	loadFloat(name, x)
	v := s.vec()
	VBROADCASTSD(x, v)
	return v
}

// addWidened adds the float32 register v, widened, into acc[0] and acc[1].
func (s *isa) addWidened(v VecVirtual, acc []VecVirtual) {
	for h := 0; h < 2; h++ {
		VADDPD(s.widen64(v, h), acc[h], acc[h])
	}
}

// returnSum folds the float64 accumulators into result i.
func (s *isa) returnSum(acc []VecVirtual, i int) {
	r := acc[0]
	for _, a := range acc[1:] {
		VADDPD(a, r, r)
	}
	storeFloat(s.fold(r, true, addPD, addSD), ReturnIndex(i))
}

func genRowKernels(s *isa) {
	genExpSum(s)
	genRowAffine(s)
	genNormBackward(s)
	genSoftmaxGrad(s)
}

// genExpSum emits dst = exp(x - shift) and its float64 sum (the softmax
// numerators), and the sum alone (log_softmax, logsumexp, cross entropy).
func genExpSum(s *isa) {
	for _, store := range []bool{true, false} {
		name, sig := "rdExpSumF32"+s.name, "func(dst, x *float32, n int, shift float32) float64"
		if !store {
			name, sig = "rdExpSumOnlyF32"+s.name, "func(x *float32, n int, shift float32) float64"
		}
		text(name, sig)
		if store {
			Doc(name + " sets dst[i] = exp(x[i] - shift) and returns their sum in float64.")
		} else {
			Doc(name + " returns the sum of exp(x[i] - shift) in float64.")
		}
		var dst ptr
		ptrs := []ptr{}
		if store {
			dst = param("dst", 4)
			ptrs = append(ptrs, dst)
		}
		x := param("x", 4)
		ptrs = append(ptrs, x)
		n := loadInt("n")
		sh := s.scalarF32("shift")
		acc := s.zeros(2)
		s.rloop(n, ptrs, 1, func(int) {
			t := s.load(x.at(0))
			VSUBPS(sh, t, t)
			e := s.exp(t)
			if store {
				VMOVUPS(e, dst.at(0))
			}
			s.addWidened(e, acc)
		})
		s.returnSum(acc, 0)
		VZEROUPPER()
		RET()
	}
}

// genRowAffine emits the elementwise steps of the forward passes:
// (x - a) - b (log_softmax), x*a + b (a channel's scale and shift) and
// ((x - m)*s)*w + b (layer_norm, rms_norm) with or without w and b.
func genRowAffine(s *isa) {
	text("rdSub2F32"+s.name, "func(dst, x *float32, n int, a, b float32)")
	Doc("rdSub2F32" + s.name + " sets dst[i] = (x[i] - a) - b.")
	dst, x := param("dst", 4), param("x", 4)
	n := loadInt("n")
	a, b := s.scalarF32("a"), s.scalarF32("b")
	s.rloop(n, []ptr{dst, x}, 2, func(j int) {
		v := s.load(x.at(j * s.lanes))
		VSUBPS(a, v, v)
		VSUBPS(b, v, v)
		VMOVUPS(v, dst.at(j*s.lanes))
	})
	VZEROUPPER()
	RET()

	text("rdAxpbF32"+s.name, "func(dst, x *float32, n int, a, b float32)")
	Doc("rdAxpbF32" + s.name + " sets dst[i] = x[i]*a + b.")
	dst, x = param("dst", 4), param("x", 4)
	n = loadInt("n")
	a, b = s.scalarF32("a"), s.scalarF32("b")
	s.rloop(n, []ptr{dst, x}, 2, func(j int) {
		v := s.load(x.at(j * s.lanes))
		VMULPS(a, v, v)
		VADDPS(b, v, v)
		VMOVUPS(v, dst.at(j*s.lanes))
	})
	VZEROUPPER()
	RET()

	for _, form := range []string{"", "W", "B", "WB"} {
		hasW, hasB := form == "W" || form == "WB", form == "B" || form == "WB"
		name := "rdNorm" + form + "F32" + s.name
		text(name, "func(dst, x, w, b *float32, n int, m, s float32)")
		Doc(name + " sets dst[i] = ((x[i] - m)*s)" + map[bool]string{true: "*w[i]"}[hasW] + map[bool]string{true: " + b[i]"}[hasB] + ".")
		dst, x := param("dst", 4), param("x", 4)
		ptrs := []ptr{dst, x}
		var w, bp ptr
		if hasW {
			w = param("w", 4)
			ptrs = append(ptrs, w)
		}
		if hasB {
			bp = param("b", 4)
			ptrs = append(ptrs, bp)
		}
		n := loadInt("n")
		m, sc := s.scalarF32("m"), s.scalarF32("s")
		s.rloop(n, ptrs, 2, func(j int) {
			e := j * s.lanes
			v := s.load(x.at(e))
			VSUBPS(m, v, v)
			VMULPS(sc, v, v)
			if hasW {
				VMULPS(w.at(e), v, v)
			}
			if hasB {
				VADDPS(bp.at(e), v, v)
			}
			VMOVUPS(v, dst.at(e))
		})
		VZEROUPPER()
		RET()
	}
}

// genNormBackward emits the steps of the normalisations' backward pass:
// the row sums of d = g*w and d*(x - m), the input gradient
// a*d + ((x - m)*c + b0), and the columns of the weight and bias
// gradients.
func genNormBackward(s *isa) {
	for _, hasW := range []bool{false, true} {
		form := map[bool]string{true: "W"}[hasW]
		name := "rdNormDots" + form + "F32" + s.name
		text(name, "func(x, gr, w *float32, n int, m float64) (sd, sdx float64)")
		Doc(name+" returns the sums of d and d*(x[i] - m) in float64, d = g[i]"+map[bool]string{true: "*w[i]"}[hasW]+".",
			"The products of float32 values are exact in float64.")
		x, g := param("x", 4), param("gr", 4)
		ptrs := []ptr{x, g}
		var w ptr
		if hasW {
			w = param("w", 4)
			ptrs = append(ptrs, w)
		}
		n := loadInt("n")
		m := s.scalarF64("m")
		sd, sdx := s.zeros(4), s.zeros(4)
		s.rloop(n, ptrs, 2, func(j int) {
			for h := 0; h < 2; h++ {
				d := s.load64(srcF32, g, j, h)
				if hasW {
					VMULPD(s.load64(srcF32, w, j, h), d, d)
				}
				xc := s.load64(srcF32, x, j, h)
				VSUBPD(m, xc, xc)
				VADDPD(d, sd[2*j+h], sd[2*j+h])
				VFMADD231PD(d, xc, sdx[2*j+h])
			}
		})
		s.returnSum(sd, 0)
		s.returnSum(sdx, 1)
		VZEROUPPER()
		RET()

		name = "rdNormGrad" + form + "F32" + s.name
		text(name, "func(dx, x, gr, w *float32, n int, m, a, b0, c float32)")
		Doc(name + " sets dx[i] = a*d + ((x[i] - m)*c + b0), d = g[i]" + map[bool]string{true: "*w[i]"}[hasW] + ".")
		dx, x2, g2 := param("dx", 4), param("x", 4), param("gr", 4)
		ptrs = []ptr{dx, x2, g2}
		if hasW {
			w = param("w", 4)
			ptrs = append(ptrs, w)
		}
		n = loadInt("n")
		mv, av, bv, cv := s.scalarF32("m"), s.scalarF32("a"), s.scalarF32("b0"), s.scalarF32("c")
		s.rloop(n, ptrs, 2, func(j int) {
			e := j * s.lanes
			d := s.load(g2.at(e))
			if hasW {
				VMULPS(w.at(e), d, d)
			}
			VMULPS(av, d, d)
			t := s.load(x2.at(e))
			VSUBPS(mv, t, t)
			VMULPS(cv, t, t)
			VADDPS(bv, t, t)
			VADDPS(t, d, d)
			VMOVUPS(d, dx.at(e))
		})
		VZEROUPPER()
		RET()
	}

	name := "rdNormColsF32" + s.name
	text(name, "func(dw, db *float64, x, gr *float32, n int, m, s float64)")
	Doc(name+" adds g[i]*((x[i] - m)*s) to dw[i] and g[i] to db[i], in float64",
		"(the weight and bias gradients of a normalised row).")
	dw, db, x, g := param("dw", 8), param("db", 8), param("x", 4), param("gr", 4)
	n := loadInt("n")
	m, sc := s.scalarF64("m"), s.scalarF64("s")
	s.rloop(n, []ptr{dw, db, x, g}, 1, func(int) {
		for h := 0; h < 2; h++ {
			e := h * s.lanes / 2
			xh := s.load64(srcF32, x, 0, h)
			VSUBPD(m, xh, xh)
			VMULPD(sc, xh, xh)
			gd := s.load64(srcF32, g, 0, h)
			a := s.load(dw.at(e))
			VFMADD231PD(gd, xh, a)
			VMOVUPD(a, dw.at(e))
			VADDPD(db.at(e), gd, gd)
			VMOVUPD(gd, db.at(e))
		}
	})
	VZEROUPPER()
	RET()
}

// genSoftmaxGrad emits softmax's input gradient y*(g - s) and
// log_softmax's g - exp(y)*s, given s (the row sum of g*y or of g).
func genSoftmaxGrad(s *isa) {
	for _, log := range []bool{false, true} {
		name := "rdSoftmaxGradF32" + s.name
		if log {
			name = "rdLogSoftmaxGradF32" + s.name
		}
		text(name, "func(dx, y, gr *float32, n int, s float32)")
		if log {
			Doc(name + " sets dx[i] = g[i] - exp(y[i])*s.")
		} else {
			Doc(name + " sets dx[i] = y[i]*(g[i] - s).")
		}
		dx, y, g := param("dx", 4), param("y", 4), param("gr", 4)
		n := loadInt("n")
		sv := s.scalarF32("s")
		unroll := 2
		if log {
			unroll = 1
		}
		s.rloop(n, []ptr{dx, y, g}, unroll, func(j int) {
			e := j * s.lanes
			gv := s.load(g.at(e))
			if log {
				p := s.exp(s.load(y.at(e)))
				VMULPS(sv, p, p)
				VSUBPS(p, gv, gv)
			} else {
				VSUBPS(sv, gv, gv)
				VMULPS(y.at(e), gv, gv)
			}
			VMOVUPS(gv, dx.at(e))
		})
		VZEROUPPER()
		RET()
	}
}
