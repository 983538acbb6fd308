package oprules

// The class layout of classification losses.

// ClassLayout views a classification input as N x C x S: [C] is one row,
// [N, C, d1, ...] has N*d1*... rows of C classes, S apart.
func ClassLayout(x Shape) (n, c, s int) {
	if len(x) == 1 {
		return 1, x[0], 1
	}
	s = 1
	for _, d := range x[2:] {
		s *= d
	}
	return x[0], x[1], s
}
