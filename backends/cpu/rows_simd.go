package cpu

import "math"

// The row kernels' steps over one float32 row: softmax's exponentials
// and their sum, the normalisations' affine maps, and the backward
// passes' dot products and gradients. Each runs its vector kernel
// (reduce_amd64.s) on the multiple of 16 and the rest through a padded
// buffer, so every element of a row goes through the same arithmetic;
// the Go loops (js/wasm, arm64) compute the same formulas, the sums in
// float64 and the elementwise steps in float32, exp through float64.

// expSumF32 sets dst[i] = exp(x[i] - shift) (unless dst is nil) and
// returns their float64 sum. The padding of a tail is -Inf, which adds
// 0 unless shift is -Inf or NaN, when every element is NaN anyway.
func expSumF32(dst, x []float32, shift float32) float64 {
	if simdLevel == simdNone {
		if hostKernels && len(x) > 0 {
			return hostExpSumF32(dst, x, shift)
		}
		return expSumGo(dst, x, shift)
	}
	n, w := len(x), wide()
	body := n &^ (ewLanes - 1)
	var s float64
	if body > 0 {
		if dst != nil {
			s = vecExpSumF32(w, &dst[0], &x[0], body, shift)
		} else {
			s = vecExpSumOnlyF32(w, &x[0], body, shift)
		}
	}
	if body < n {
		var xt, dt [ewLanes]float32
		copy(xt[:], x[body:])
		for i := n - body; i < ewLanes; i++ {
			xt[i] = float32(math.Inf(-1))
		}
		s += vecExpSumF32(w, &dt[0], &xt[0], ewLanes, shift)
		if dst != nil {
			copy(dst[body:], dt[:n-body])
		}
	}
	return s
}

func expSumGo(dst, x []float32, shift float32) float64 {
	var s float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - shift)))
		if dst != nil {
			dst[i] = e
		}
		s += float64(e)
	}
	return s
}

// tailOf copies the elements of v from body on into buf and points at
// it; nil for an absent (nil) operand.
func tailOf(v []float32, body int, buf *[ewLanes]float32) *float32 {
	if v == nil {
		return nil
	}
	copy(buf[:], v[body:])
	return &buf[0]
}

// sub2F32 sets dst[i] = (x[i] - a) - b.
func sub2F32(dst, x []float32, a, b float32) {
	n, body := len(x), vecBody(len(x))
	if simdLevel == simdNone {
		for i, v := range x {
			dst[i] = (v - a) - b
		}
		return
	}
	if body > 0 {
		vecSub2F32(wide(), &dst[0], &x[0], body, a, b)
	}
	if body < n {
		var xt, dt [ewLanes]float32
		vecSub2F32(wide(), &dt[0], tailOf(x, body, &xt), ewLanes, a, b)
		copy(dst[body:n], dt[:])
	}
}

// axpbF32 sets dst[i] = x[i]*a + b.
func axpbF32(dst, x []float32, a, b float32) {
	n, body := len(x), vecBody(len(x))
	if simdLevel == simdNone {
		for i, v := range x {
			dst[i] = v*a + b
		}
		return
	}
	if body > 0 {
		vecAxpbF32(wide(), &dst[0], &x[0], body, a, b)
	}
	if body < n {
		var xt, dt [ewLanes]float32
		vecAxpbF32(wide(), &dt[0], tailOf(x, body, &xt), ewLanes, a, b)
		copy(dst[body:n], dt[:])
	}
}

// normF32 sets dst[i] = ((x[i] - m)*s)*w[i] + b[i], without the weight
// or the bias when w or b is nil.
func normF32(dst, x, w, b []float32, m, s float32) {
	n, body := len(x), vecBody(len(x))
	if simdLevel == simdNone {
		normGo(dst, x, w, b, m, s)
		return
	}
	if body > 0 {
		normRun(&dst[0], &x[0], firstOf(w), firstOf(b), body, m, s)
	}
	if body < n {
		var xt, wt, bt, dt [ewLanes]float32
		normRun(&dt[0], tailOf(x, body, &xt), tailOf(w, body, &wt), tailOf(b, body, &bt), ewLanes, m, s)
		copy(dst[body:n], dt[:])
	}
}

// normRun calls the kernel of normF32 for the operands present.
func normRun(d, x, w, b *float32, n int, m, s float32) {
	switch {
	case w != nil && b != nil:
		vecNormWBF32(wide(), d, x, w, b, n, m, s)
	case w != nil:
		vecNormWF32(wide(), d, x, w, b, n, m, s)
	case b != nil:
		vecNormBF32(wide(), d, x, w, b, n, m, s)
	default:
		vecNormF32(wide(), d, x, w, b, n, m, s)
	}
}

func normGo(dst, x, w, b []float32, m, s float32) {
	for i, v := range x {
		y := (v - m) * s
		if w != nil {
			y *= w[i]
		}
		if b != nil {
			y += b[i]
		}
		dst[i] = y
	}
}

// firstOf is &v[0], or nil for an absent (nil) operand.
func firstOf(v []float32) *float32 {
	if v == nil {
		return nil
	}
	return &v[0]
}

// normDotsF32 returns the float64 sums of d and d*(x[i] - m), d =
// g[i]*w[i] (g[i] when w is nil).
func normDotsF32(x, g, w []float32, m float64) (sd, sdx float64) {
	body := vecBody(len(x))
	if body > 0 {
		if w != nil {
			sd, sdx = vecNormDotsWF32(wide(), &x[0], &g[0], &w[0], body, m)
		} else {
			sd, sdx = vecNormDotsF32(wide(), &x[0], &g[0], nil, body, m)
		}
	}
	for i := body; i < len(x); i++ {
		d := float64(g[i])
		if w != nil {
			d *= float64(w[i])
		}
		sd += d
		sdx += d * (float64(x[i]) - m)
	}
	return sd, sdx
}

// normGradF32 sets dx[i] = a*d + ((x[i] - m)*c + b0), d = g[i]*w[i] (g[i]
// when w is nil).
func normGradF32(dx, x, g, w []float32, m, a, b0, c float32) {
	n, body := len(x), vecBody(len(x))
	if simdLevel == simdNone {
		for i, v := range x {
			d := g[i]
			if w != nil {
				d *= w[i]
			}
			dx[i] = a*d + ((v-m)*c + b0)
		}
		return
	}
	if body > 0 {
		normGradRun(&dx[0], &x[0], &g[0], firstOf(w), body, m, a, b0, c)
	}
	if body < n {
		var xt, gt, wt, dt [ewLanes]float32
		normGradRun(&dt[0], tailOf(x, body, &xt), tailOf(g, body, &gt), tailOf(w, body, &wt), ewLanes, m, a, b0, c)
		copy(dx[body:n], dt[:])
	}
}

// normGradRun calls the kernel of normGradF32 with or without w.
func normGradRun(dx, x, g, w *float32, n int, m, a, b0, c float32) {
	if w != nil {
		vecNormGradWF32(wide(), dx, x, g, w, n, m, a, b0, c)
	} else {
		vecNormGradF32(wide(), dx, x, g, w, n, m, a, b0, c)
	}
}

// normColsF32 adds g[i]*((x[i] - m)*s) to dw[i] and g[i] to db[i], in
// float64.
func normColsF32(dw, db []float64, x, g []float32, m, s float64) {
	body := vecBody(len(x))
	if body > 0 {
		vecNormColsF32(wide(), &dw[0], &db[0], &x[0], &g[0], body, m, s)
	}
	for i := body; i < len(x); i++ {
		gd := float64(g[i])
		dw[i] += gd * ((float64(x[i]) - m) * s)
		db[i] += gd
	}
}

// softmaxGradF32 sets dx[i] = y[i]*(g[i] - s) or, for log_softmax,
// g[i] - exp(y[i])*s.
func softmaxGradF32(log bool, dx, y, g []float32, s float32) {
	n, body := len(y), vecBody(len(y))
	if simdLevel == simdNone {
		for i, v := range y {
			if log {
				dx[i] = g[i] - float32(math.Exp(float64(v)))*s
			} else {
				dx[i] = v * (g[i] - s)
			}
		}
		return
	}
	if body > 0 {
		softmaxGradRun(log, &dx[0], &y[0], &g[0], body, s)
	}
	if body < n {
		var yt, gt, dt [ewLanes]float32
		softmaxGradRun(log, &dt[0], tailOf(y, body, &yt), tailOf(g, body, &gt), ewLanes, s)
		copy(dx[body:n], dt[:])
	}
}

func softmaxGradRun(log bool, dx, y, g *float32, n int, s float32) {
	if log {
		vecLogSoftmaxGradF32(wide(), dx, y, g, n, s)
	} else {
		vecSoftmaxGradF32(wide(), dx, y, g, n, s)
	}
}
