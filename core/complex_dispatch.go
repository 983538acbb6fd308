package core

import (
	"fmt"
	"slices"
	"strings"
)

// A registry op given a complex tensor (or asked for a complex dtype) runs
// its complex form: the op's meaning for complex numbers, written with real
// ops over the parts (complex_math.go) or over the real pairs. No kernel
// sees a complex tensor. An op without a complex form refuses complex
// input with an error that lists the ops that take it.

// complexForm computes op(in) for inputs of which at least one is complex
// (or with a complex dtype attribute); a holds the normalised attributes.
type complexForm func(in []*Tensor, a Attrs) ([]*Tensor, error)

var complexForms map[string]complexForm

// wantsComplexForm says whether a call must take its op's complex form:
// view ops and the complex category's own ops take complex tensors as
// they are.
func wantsComplexForm(def *OpDef, inputs []*Tensor, attrs Attrs) bool {
	if def.View != nil || def.Category == "complex" {
		return false
	}
	for _, t := range inputs {
		if t != nil && t.dtype.IsComplex() {
			return true
		}
	}
	switch d := attrs["dtype"].(type) {
	case DType:
		return d.IsComplex()
	case string:
		p, err := ParseDType(d)
		return err == nil && p.IsComplex()
	}
	return false
}

func callComplex(def *OpDef, inputs []*Tensor, attrs Attrs) ([]*Tensor, error) {
	form := complexForms[def.Name]
	if form == nil {
		return nil, opErr(def.Name, "does not take complex dtypes (c64, c128); the ops that do: %s", complexOpNames())
	}
	inputs, err := checkInputs(def, inputs, true)
	if err != nil {
		return nil, err
	}
	a, err := normalizeAttrs(def.Name, def.Attrs, attrs)
	if err != nil {
		return nil, err
	}
	outs, err := form(inputs, a)
	if err == nil {
		for _, o := range outs {
			if err = o.Err(); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, wrapOp(def.Name, err)
	}
	return outs, nil
}

// complexOpNames lists the ops with a complex form and the complex category.
func complexOpNames() string {
	names := make([]string, 0, len(complexForms)+8)
	for n := range complexForms {
		names = append(names, n)
	}
	for _, d := range Ops() {
		if d.Category == "complex" {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// toComplex converts every non-nil input to their common complex dtype.
func toComplex(in []*Tensor) []*Tensor {
	common := Invalid
	for _, t := range in {
		if t == nil {
			continue
		}
		if common == Invalid {
			common = t.dtype
		} else {
			common = PromoteTypes(common, t.dtype)
		}
	}
	common = ComplexDType(common)
	out := make([]*Tensor, len(in))
	for i, t := range in {
		out[i] = castComplex(t, common)
	}
	return out
}

// castComplex converts t (complex or real) to the complex dtype d.
func castComplex(t *Tensor, d DType) *Tensor {
	switch {
	case t == nil || t.dtype == d:
		return t
	case t.dtype.IsComplex():
		return fromPairs(pairsOf(t).Cast(d.RealDType()))
	}
	re := t.Cast(d.RealDType())
	return Complex(re, ZerosLike(re))
}

func one(f func(z *Tensor) *Tensor) complexForm {
	return func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		return []*Tensor{f(toComplex(in[:1])[0])}, nil
	}
}

func two(f func(x, y *Tensor) *Tensor) complexForm {
	return func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		c := toComplex(in[:2])
		return []*Tensor{f(c[0], c[1])}, nil
	}
}

// onPairs runs a real op over the pairs of its (promoted) inputs, with
// attributes the caller rewrote for the pairs' extra trailing axis.
func onPairs(op string, attrs func(z *Tensor, a Attrs) (Attrs, error)) complexForm {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		c := toComplex(in)
		if attrs != nil {
			var err error
			if a, err = attrs(c[0], a); err != nil {
				return nil, err
			}
		}
		ps := make([]*Tensor, len(c))
		for i, z := range c {
			ps[i] = pairsOf(z)
		}
		outs, err := Call(op, ps, a)
		if err != nil {
			return nil, err
		}
		for i, o := range outs {
			outs[i] = fromPairs(o)
		}
		return outs, nil
	}
}

// withAxis normalises the integer attribute key against the complex rank
// (plus extra, for stack's new axis), so a negative axis does not count the
// pairs' trailing axis.
func withAxis(key string, extra int) func(z *Tensor, a Attrs) (Attrs, error) {
	return func(z *Tensor, a Attrs) (Attrs, error) {
		ax, err := NormAxis(a.Int(key), z.Rank()+extra)
		if err != nil {
			return nil, err
		}
		return withAttr(a, key, ax), nil
	}
}

// withAxes normalises the axes attribute; absent means every complex axis.
func withAxes(z *Tensor, a Attrs) (Attrs, error) {
	axes := a.Ints("axes")
	if _, set := a["axes"]; !set || axes == nil {
		axes = make([]int, z.Rank())
		for i := range axes {
			axes[i] = i
		}
		return withAttr(a, "axes", axes), nil
	}
	n, err := NormAxes(axes, z.Rank())
	if err != nil {
		return nil, err
	}
	return withAttr(a, "axes", n), nil
}

// reduceForm is sum or mean over complex axes (a rank-0 tensor reduces to itself).
func reduceForm(op string) complexForm {
	pairs := onPairs(op, withAxes)
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		if in[0].Rank() == 0 {
			return []*Tensor{toComplex(in[:1])[0].Contiguous()}, nil
		}
		return pairs(in, a)
	}
}

// predicate is a boolean test combining the parts' tests: isnan and isinf
// hold when either part's does, isfinite when both parts'.
func predicate(op, join string) complexForm {
	return func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		z := in[0]
		return []*Tensor{bin(join, un(op, realPart(z)), un(op, imagPart(z)))}, nil
	}
}

// equality compares both parts: eq when both are equal, ne when either differs.
func equality(op, join string) complexForm {
	return func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		c := toComplex(in[:2])
		return []*Tensor{bin(join, bin(op, realPart(c[0]), realPart(c[1])), bin(op, imagPart(c[0]), imagPart(c[1])))}, nil
	}
}

func castForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	d, x := a.DType("dtype"), in[0]
	if x.dtype.IsComplex() && !d.IsComplex() {
		return nil, fmt.Errorf("casting dtype %s to %s would drop the imaginary part; take real(x), imag(x) or abs(x) first", x.dtype, d)
	}
	return []*Tensor{castComplex(x, d)}, nil
}

func whereForm(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	c := toComplex(in[1:3])
	cond := call1("unsqueeze", Attrs{"axis": -1}, in[0])
	return []*Tensor{fromPairs(call1("where", nil, cond, pairsOf(c[0]), pairsOf(c[1])))}, nil
}

func rollForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	z := toComplex(in[:1])[0]
	if axes := a.Ints("axes"); axes != nil {
		n, err := NormAxes(axes, z.Rank())
		if err != nil {
			return nil, err
		}
		return []*Tensor{fromPairs(call1("roll", withAttr(a, "axes", n), pairsOf(z)))}, nil
	}
	flat := pairsOf(z).Reshape(Shape{-1, 2})
	rolled := call1("roll", Attrs{"shifts": a.Ints("shifts"), "axes": []int{0}}, flat)
	return []*Tensor{fromPairs(rolled).Reshape(z.shape)}, nil
}

func tileForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	reps := append(slices.Clone(a.Ints("reps")), 1)
	return []*Tensor{fromPairs(call1("tile", Attrs{"reps": reps}, pairsOf(toComplex(in[:1])[0])))}, nil
}

func takeAlongForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	z := toComplex(in[:1])[0]
	ax, err := NormAxis(a.Int("axis"), z.Rank())
	if err != nil {
		return nil, err
	}
	idx := call1("unsqueeze", Attrs{"axis": -1}, in[1])
	return []*Tensor{fromPairs(call1("take_along_axis", Attrs{"axis": ax}, pairsOf(z), idx))}, nil
}

func indexSelectForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	z := toComplex(in[:1])[0]
	ax, err := NormAxis(a.Int("axis"), max(z.Rank(), 1))
	if err != nil {
		return nil, err
	}
	return []*Tensor{fromPairs(call1("index_select", Attrs{"axis": ax}, pairsOf(z), in[1]))}, nil
}

// likeForm is zeros_like, ones_like and full_like with a complex template
// or dtype: the real part filled, the imaginary part zero.
func likeForm(op string) complexForm {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		x, d := in[0], in[0].dtype
		if v, ok := a["dtype"].(DType); ok && v != Invalid {
			d = v
		}
		base := x
		if x.dtype.IsComplex() {
			base = realPart(x)
		}
		ra := withAttr(a, "dtype", d.RealDType())
		re := call1(op, ra, base)
		if !d.IsComplex() {
			return []*Tensor{re}, nil
		}
		return []*Tensor{Complex(re, ZerosLike(re))}, nil
	}
}

// creationForm is zeros, ones, full and eye asked for a complex dtype.
func creationForm(op string) complexForm {
	return func(_ []*Tensor, a Attrs) ([]*Tensor, error) {
		re := call1(op, withAttr(a, "dtype", a.DType("dtype").RealDType()))
		return []*Tensor{Complex(re, ZerosLike(re))}, nil
	}
}

func vecdotForm(in []*Tensor, a Attrs) ([]*Tensor, error) {
	c := toComplex(in[:2])
	p := cmul(un("conj", c[0]), c[1])
	if err := p.Err(); err != nil {
		return nil, err
	}
	ax, err := NormAxis(a.Int("axis"), p.Rank())
	if err != nil {
		return nil, err
	}
	return []*Tensor{call1("sum", Attrs{"axes": []int{ax}}, p)}, nil
}

func splitForm(op string) complexForm { return onPairs(op, withAxis("axis", 0)) }

// toRealForm is a transform from complex pairs to a real signal (irfft,
// irfftn, hfft) given a complex tensor.
func toRealForm(op string) complexForm {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		return Call(op, []*Tensor{pairsOf(in[0])}, a)
	}
}

// shiftForm is fftshift or ifftshift of a complex tensor: over its pairs,
// whose trailing axis is not an array axis.
func shiftForm(op string) complexForm {
	pairs := onPairs(op, nil)
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		return pairs(in, withAttr(a, "pairs", true))
	}
}

func init() {
	complexForms = map[string]complexForm{
		"add": onPairs("add", nil), "sub": onPairs("sub", nil), "neg": onPairs("neg", nil),
		// round: each part to the nearest integer, ties to even (the standard's round of a complex number)
		"round": onPairs("round", nil),
		"mul":   two(cmul), "div": two(cdiv), "pow": two(cpow), "matmul": two(cmatmul),
		// tensordot is permutes, reshapes (views) and one matmul, whose complex form runs
		"tensordot": func(in []*Tensor, a Attrs) ([]*Tensor, error) { return composeTensordot(toComplex(in[:2]), a) },
		"abs":       one(cabs), "sign": one(csign), "square": one(func(z *Tensor) *Tensor { return cmul(z, z) }),
		"reciprocal": one(func(z *Tensor) *Tensor { return cdiv(cone(z), z) }),
		"exp":        one(cexp), "expm1": one(cexpm1), "log": one(clog), "sqrt": one(csqrt),
		"rsqrt": one(func(z *Tensor) *Tensor { return cdiv(cone(z), csqrt(z)) }),
		"log1p": one(clog1p), "log2": one(clog2), "log10": one(clog10),
		"sin": one(csin), "cos": one(ccos), "tan": one(ctan),
		"sinh": one(csinh), "cosh": one(ccosh), "tanh": one(ctanh),
		"asin": one(casin), "acos": one(cacos), "atan": one(catan),
		"asinh": one(casinh), "acosh": one(cacosh), "atanh": one(catanh),
		"isnan": predicate("isnan", "logical_or"), "isinf": predicate("isinf", "logical_or"),
		"isfinite": predicate("isfinite", "logical_and"),
		"eq":       equality("eq", "logical_and"), "ne": equality("ne", "logical_or"),
		"sum": reduceForm("sum"), "mean": reduceForm("mean"), "vecdot": vecdotForm,
		// a running sum of complex numbers is the running sums of their parts
		"cumsum": onPairs("cumsum", withAxis("axis", 0)),
		"prod":   prodForm, "cumprod": cumprodForm, "unique": uniqueForm,
		"all": truthForm("all"), "any": truthForm("any"), "nonzero": truthForm("nonzero"),
		"cast": castForm, "contiguous": onPairs("contiguous", nil), "where": whereForm,
		"concat": onPairs("concat", withAxis("axis", 0)), "stack": onPairs("stack", withAxis("axis", 1)),
		"flip": onPairs("flip", withAxes), "roll": rollForm, "tile": tileForm,
		"index_select": indexSelectForm, "take_along_axis": takeAlongForm,
		"split": splitForm("split"), "chunk": splitForm("chunk"),
		"zeros_like": likeForm("zeros_like"), "ones_like": likeForm("ones_like"), "full_like": likeForm("full_like"),
		"zeros": creationForm("zeros"), "ones": creationForm("ones"), "full": creationForm("full"), "eye": creationForm("eye"),
		// The transforms work on pairs; a complex tensor goes in (and comes
		// out) as itself. rfft, rfftn and ihfft take real signals only.
		"fft": onPairs("fft", nil), "ifft": onPairs("ifft", nil),
		"fftn": onPairs("fftn", nil), "ifftn": onPairs("ifftn", nil),
		"irfft": toRealForm("irfft"), "irfftn": toRealForm("irfftn"), "hfft": toRealForm("hfft"),
		"fftshift": shiftForm("fftshift"), "ifftshift": shiftForm("ifftshift"),
	}
}

// withAttr is a copy of a with key set to v.
func withAttr(a Attrs, key string, v any) Attrs {
	out := a.Clone()
	if out == nil {
		out = Attrs{}
	}
	out[key] = v
	return out
}

// truthForm is op (all, any, nonzero) over z != 0: a complex number is
// true where either part is nonzero (the standard's all, any and nonzero
// take every dtype).
func truthForm(op string) complexForm {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		z := in[0]
		nz := bin("logical_or", bin("ne", realPart(z), scalarLike(0, z)), bin("ne", imagPart(z), scalarLike(0, z)))
		return Call(op, append([]*Tensor{nz}, in[1:]...), a)
	}
}
