package core

// unique of complex numbers: sorted lexicographically, by the real part
// and then the imaginary part, as NumPy sorts them, where a NaN part puts
// an element after every element without one: x + yi, then x + NaN i (by
// x), then NaN + yi (by y), then NaN + NaN i. Each element with a NaN part is a value of its
// own (NaN != NaN), as the standard's unique_* ask. Written with real ops
// (two stable argsorts, a scan, masked selects and a scatter), so every
// backend runs it.

func uniqueForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x := toComplex(in[:1])[0]
	n := x.Numel()
	z := x.Contiguous().Reshape(Shape{n})
	inv, cnt := a.Bool("return_inverse"), a.Bool("return_counts")
	i64 := func(t *Tensor) *Tensor { return t.Cast(I64) }
	if n == 0 {
		outs := []*Tensor{z}
		if inv {
			outs = append(outs, Zeros(x.shape.Clone(), I64, x.Device()))
		}
		if cnt {
			outs = append(outs, Zeros(Shape{0}, I64, x.Device()))
		}
		return outs, nil
	}
	sortBy := func(t *Tensor) *Tensor { return call1("argsort", Attrs{"axis": 0, "stable": true}, t) }
	take := func(t, idx *Tensor) *Tensor { return call1("index_select", Attrs{"axis": 0}, t, idx) }
	p1 := sortBy(imagPart(z).Contiguous())
	perm := take(p1, sortBy(take(realPart(z).Contiguous(), p1)))
	// NumPy's classes, in order: no NaN part, a NaN imaginary part only, a
	// NaN real part only, both NaN; lexicographic within each.
	nanRe, nanIm := i64(un("isnan", realPart(z))), i64(un("isnan", imagPart(z)))
	class := bin("add", bin("add", nanRe, nanRe), nanIm)
	perm = take(perm, sortBy(take(class, perm)))
	s := take(z, perm)
	first := Full(Shape{1}, 1, Bool, x.Device())
	if n > 1 {
		prev, _ := splitAt(s, 0, n-1)
		_, cur := splitAt(s, 0, 1)
		first = call1("concat", Attrs{"axis": 0}, first, call1("ne", nil, cur, prev))
	}
	pick := func(t *Tensor) *Tensor { return call1("masked_select", nil, t, first) }
	values := Complex(pick(realPart(s).Contiguous()), pick(imagPart(s).Contiguous()))
	group := call1("sub", nil, call1("cumsum", Attrs{"axis": 0}, i64(first)), Full(Shape{1}, 1, I64, x.Device()))
	counts := call1("scatter_add", Attrs{"axis": 0}, call1("zeros_like", Attrs{"dtype": I64}, realPart(values)), group,
		Full(Shape{n}, 1, I64, x.Device()))
	if !a.Bool("sorted") {
		// The first position of each value is its group's first element (both sorts are stable).
		order := sortBy(pick(perm))
		values, counts = take(values, order), take(counts, order)
		group = take(sortBy(order), group)
	}
	outs := []*Tensor{values}
	if inv {
		outs = append(outs, take(group, sortBy(perm)).Reshape(x.shape.Clone()))
	}
	if cnt {
		outs = append(outs, counts)
	}
	return outs, nil
}
