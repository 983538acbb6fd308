package onnx

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Cast and CastLike between string tensors and numbers, on the host.
//
// Numbers are written as ONNX's reference implementation writes them
// (NumPy's str): integers in decimal, booleans as True and False, and
// floats with the fewest digits that read back to the same value of
// their type, positionally ("0.5", "100.0") from 1e-4 up to a bound that
// grows with the type's precision (1e3 for 16-bit floats, 1e6 for
// float32, 1e16 for double) and in scientific notation outside it
// ("1e-05", "1.5e+07"). Infinities and NaN are written as the literals
// ONNX reserves for them: "INF", "-INF" and "NaN". The float8 and float4
// types, held in f32, are written as float32 values (their values are
// float32 values exactly).
//
// Strings are read as ONNX's text says: plain and scientific notation,
// "INF", "+INF", "-INF" and "NaN" in any case, white space around the
// number ignored. ONNX leaves a string that is no number undefined; the
// importer refuses it, naming the element, rather than invent a value.
// A number with a fraction cast to an integer type is truncated ("100.5"
// gives 100, as the text allows); a boolean reads "true" and "false" in
// any case, or a number (nonzero is true).

func castStrings(c *ctx) ([]Value, error) {
	to := elemType(c.attrInt("to", 0))
	if c.n.pb.GetOpType() == "CastLike" {
		switch like := c.value(1).(type) {
		case *Strings:
			to = pb.TensorProto_STRING
		case *core.Tensor:
			to = c.inType(1)
		default:
			c.fail("input 1 (the type to cast like) is %s, want a tensor", describe(like))
			return nil, nil
		}
	}
	switch x := c.value(0).(type) {
	case *Strings:
		if to == pb.TensorProto_STRING {
			return []Value{x}, nil
		}
		t, err := c.parseStrings(x, to)
		if err != nil || c.err != nil {
			return nil, err
		}
		c.setType(0, to)
		return []Value{t}, nil
	case *core.Tensor:
		if to != pb.TensorProto_STRING {
			ts, err := castAs(c, to)
			if len(ts) == 0 {
				return nil, err
			}
			return []Value{ts[0]}, err
		}
		data, err := formatNumbers(x, c.inType(0))
		if err != nil {
			return nil, err
		}
		return []Value{&Strings{Shape: x.Shape(), Data: data}}, nil
	default:
		c.in(0)
		return nil, nil
	}
}

// parseStrings reads a string tensor as numbers of element type to.
func (c *ctx) parseStrings(x *Strings, to elemType) (*core.Tensor, error) {
	dt, err := heldType(int32(to))
	if err != nil {
		return nil, err
	}
	saturate, roundMode := c.attrInt("saturate", 1) != 0, c.attrString("round_mode", "up")
	bad := func(i int, why string) {
		c.fail("element %d (%q) of input 0 (%q) %s, so it cannot be cast to %s", i, x.Data[i], c.n.inputs[0], why, typeName(to))
	}
	switch {
	case to == pb.TensorProto_FLOAT: // read as float32 directly: no double rounding
		v := make([]float32, len(x.Data))
		for i, s := range x.Data {
			f, ok := parseFloat(s, 32)
			if !ok {
				bad(i, "is not a number")
				return nil, nil
			}
			v[i] = float32(f)
		}
		return core.FromSlice(v, x.Shape, c.m.dev), nil
	case dt.IsFloat():
		v := make([]float64, len(x.Data))
		for i, s := range x.Data {
			f, ok := parseFloat(s, 64)
			if !ok {
				bad(i, "is not a number")
				return nil, nil
			}
			v[i] = f
		}
		return castTo(core.FromSlice(v, x.Shape, c.m.dev), to, saturate, roundMode)
	case dt == core.Bool:
		v := make([]bool, len(x.Data))
		for i, s := range x.Data {
			b, ok := parseBool(s)
			if !ok {
				bad(i, "is neither true, false nor a number")
				return nil, nil
			}
			v[i] = b
		}
		return core.FromSlice(v, x.Shape, c.m.dev), nil
	}
	v := make([]int64, len(x.Data))
	for i, s := range x.Data {
		n, why := parseInt(s)
		if why != "" {
			bad(i, why)
			return nil, nil
		}
		v[i] = n
	}
	return castTo(core.FromSlice(v, x.Shape, c.m.dev), to, saturate, roundMode)
}

// parseFloat reads a number in plain or scientific notation, or ONNX's
// INF and NaN literals in any case. A value beyond the type's range is
// an infinity (or zero), as strtod gives, not an error.
func parseFloat(s string, bits int) (float64, bool) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "+nan") || strings.EqualFold(s, "-nan") {
		return math.NaN(), true
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// parseInt reads an integer, or a finite number whose fraction is
// dropped; why says what is wrong otherwise.
func parseInt(s string) (int64, string) {
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err == nil:
		return n, ""
	case errors.Is(err, strconv.ErrRange):
		return 0, "is out of the range of INT64"
	}
	f, ok := parseFloat(t, 64)
	switch {
	case !ok:
		return 0, "is not a number"
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, "is not finite"
	case f >= 1<<63 || f < -(1<<63):
		return 0, "is out of the range of INT64"
	}
	return int64(f), ""
}

func parseBool(s string) (bool, bool) {
	t := strings.TrimSpace(s)
	switch {
	case strings.EqualFold(t, "true"):
		return true, true
	case strings.EqualFold(t, "false"):
		return false, true
	}
	f, ok := parseFloat(t, 64)
	return f != 0, ok // NaN is true, as Cast from a float gives
}

// formatNumbers writes a tensor's elements (of element type et) as
// strings.
func formatNumbers(x *core.Tensor, et elemType) ([]string, error) {
	dt := x.DType()
	if !dt.IsFloat() {
		v, err := x.Int64s()
		if err != nil {
			return nil, err
		}
		out := make([]string, len(v))
		for i, n := range v {
			switch {
			case dt == core.Bool && n != 0:
				out[i] = "True"
			case dt == core.Bool:
				out[i] = "False"
			case et == pb.TensorProto_UINT64:
				out[i] = strconv.FormatUint(uint64(n), 10)
			default:
				out[i] = strconv.FormatInt(n, 10)
			}
		}
		return out, nil
	}
	v, err := x.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(v))
	for i, f := range v {
		out[i] = formatFloat(f, dt)
	}
	return out, nil
}

// formatFloat writes f, a value of dtype dt, with the fewest digits that
// read back to it, positionally or in scientific notation as NumPy does.
func formatFloat(f float64, dt core.DType) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	var sci string
	positionalBelow := 1e16
	switch dt {
	case core.F64:
		sci = strconv.FormatFloat(f, 'e', -1, 64)
	case core.F16:
		sci, positionalBelow = shortestE(f, 10, -14), 1e3
	case core.BF16:
		sci, positionalBelow = shortestE(f, 7, -126), 1e3
	default:
		sci, positionalBelow = strconv.FormatFloat(f, 'e', -1, 32), 1e6
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < positionalBelow) {
		return positional(sci)
	}
	return sci
}

// shortestE is the shortest scientific form of f, a value of a binary
// float type with mant fraction bits and minExp its least normal exponent
// (16-bit floats, which strconv does not format), that rounds back to f.
func shortestE(f float64, mant, minExp int) string {
	for prec := 0; prec < 17; prec++ {
		s := strconv.FormatFloat(f, 'e', prec, 64)
		if g, err := strconv.ParseFloat(s, 64); err == nil && roundToBits(g, mant, minExp) == f {
			return s
		}
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}

// roundToBits rounds v to the nearest value (ties to even) of a binary
// float type with mant fraction bits and least normal exponent minExp.
func roundToBits(v float64, mant, minExp int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	_, e := math.Frexp(v)
	exp := max(e-1, minExp)
	q := math.Ldexp(1, exp-mant)
	return math.RoundToEven(v/q) * q
}

// positional rewrites a scientific form ("1.25e+02") positionally
// ("125.0"), keeping its digits and a ".0" where there is no fraction.
func positional(sci string) string {
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1)
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}
