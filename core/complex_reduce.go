package core

import "slices"

// The products of complex numbers (prod, cumprod), written with the
// complex multiplication of complex_math.go, so that every backend runs
// them and autograd records the products: the gradient of a product is
// the product rule's, which PyTorch's torch.prod of complex numbers gives
// too (without dividing by the factors, so zeros are no special case).

// splitAt cuts z along axis into its first k elements and the rest.
func splitAt(z *Tensor, axis, k int) (*Tensor, *Tensor) {
	n := z.shape[axis]
	outs, err := Call("split", []*Tensor{z}, Attrs{"sizes": []int{k, n - k}, "axis": axis})
	if err != nil {
		e := errTensor(err)
		return e, e
	}
	return outs[0], outs[1]
}

// complexOnes is 1+0i in z's complex dtype and device, of the given shape.
func complexOnes(z *Tensor, shape Shape) *Tensor {
	re := Full(shape, 1, z.dtype.RealDType(), z.Device())
	return Complex(re, ZerosLike(re))
}

// prodForm multiplies along the reduced axes (moved last and flattened)
// by halves: log2(n) steps of elementwise products.
func prodForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	z := toComplex(in[:1])[0]
	na, err := withAxes(z, a)
	if err != nil {
		return nil, err
	}
	axes := na.Ints("axes")
	var kept, perm []int
	var keptShape Shape
	n := 1
	for i := range z.Rank() {
		if slices.Contains(axes, i) {
			n *= z.shape[i]
			continue
		}
		kept = append(kept, i)
		keptShape = append(keptShape, z.shape[i])
	}
	perm = append(append(perm, kept...), axes...)
	out := keptShape.Clone()
	if a.Bool("keepdim") {
		out = z.shape.Clone()
		for _, ax := range axes {
			out[ax] = 1
		}
	}
	if n == 0 {
		return []*Tensor{complexOnes(z, out)}, nil
	}
	t := call1("permute", Attrs{"dims": perm}, z).Contiguous().Reshape(append(keptShape.Clone(), n))
	last := len(keptShape)
	for n > 1 {
		head, tail := t, (*Tensor)(nil)
		if n%2 == 1 {
			head, tail = splitAt(t, last, n-1)
		}
		x, y := splitAt(head, last, (n-n%2)/2)
		t = cmul(x, y)
		if tail != nil {
			t = call1("concat", Attrs{"axis": last}, t, tail)
		}
		n = (n + 1) / 2
	}
	return []*Tensor{t.Contiguous().Reshape(out)}, nil
}

// cumprodForm is a running product by doubling (Hillis and Steele): after
// step k every element holds the product of the 2^k elements ending at it.
func cumprodForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	z := toComplex(in[:1])[0]
	if z.Rank() == 0 {
		return []*Tensor{z.Contiguous()}, nil
	}
	axis, err := NormAxis(a.Int("axis"), z.Rank())
	if err != nil {
		return nil, err
	}
	n := z.shape[axis]
	t := z.Contiguous()
	for k := 1; k < n; k *= 2 {
		pad := t.shape.Clone()
		pad[axis] = k
		head, _ := splitAt(t, axis, n-k)
		t = cmul(t, call1("concat", Attrs{"axis": axis}, complexOnes(z, pad), head))
	}
	return []*Tensor{t}, nil
}
