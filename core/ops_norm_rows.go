package core

import "github.com/webtensor/webtensor/core/oprules"

// The norms' GPU kernels written once as row bodies (ElementBody.Rows,
// backends/lower's row dialect): one row is the trailing normalized_shape
// elements, the lanes of a row share its elements in steps of lanes.

// normRows is how many rows of normalized_shape's size x holds.
func normRows(ins []Shape, _ Shape, a Attrs) int {
	n := normRowLen(a)
	if n == 0 {
		return 0
	}
	return ins[0].Numel() / n
}

// normRowLen is the number of elements normalized_shape spans.
func normRowLen(a Attrs) int {
	n := 1
	for _, d := range a.Ints("normalized_shape") {
		n *= d
	}
	return n
}

// rmsNormBody: each lane adds the squares of its share of the row, the
// lanes' sums add up (row_sum), and each lane scales its share by
// 1/sqrt(mean + eps), times the weight when there is one.
func rmsNormBody(t BodyTypes, a Attrs, s BodySlots) string {
	s.SetF(0, oprules.RMSNormEps(a, t.In[0]))
	s.SetU(1, uint32(normRowLen(a)))
	y := "x0(base + j) * scale"
	if len(t.In) > 1 && t.In[1] != Invalid {
		y += " * x1(j)"
	}
	return `
	let n = pu(1u);
	let base = row * n;
	var q: ` + t.Float + ` = 0.0;
	for (var j = lane; j < n; j += lanes) {
		let v = x0(base + j);
		q += v * v;
	}
	let total = row_sum(q);
	let scale = 1.0 / sqrt(total / ` + t.Float + `(n) + ` + t.Float + `(pf(0u)));
	for (var j = lane; j < n; j += lanes) {
		store(base + j, ` + y + `);
	}`
}
