package backendtest

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// RunUnsigned checks u16 and u64 on dev against Go's uint16 and uint64
// arithmetic: the elementwise ops (wrapping, unsigned division and right
// shifts, comparisons), reductions and searches, sorting, casts and index
// tensors of these dtypes. u64 values reach past 2^63 and 2^53, where an
// int64 or float64 path would give wrong answers. A dtype the device does
// not store must be refused at upload with an error that names it.
func RunUnsigned(t *testing.T, dev core.Device) {
	b, err := core.BackendFor(dev)
	if err != nil {
		t.Fatalf("open %v: %v", dev, err)
	}
	for _, d := range []core.DType{core.U16, core.U64} {
		t.Run(d.String(), func(t *testing.T) {
			if !slices.Contains(b.Capabilities().DTypes, d) {
				x := unsignedTensor(dev, d, []uint64{1})
				if x.Err() == nil || !strings.Contains(x.Err().Error(), d.String()) {
					t.Fatalf("%s on %v: want an upload error naming it, got %v", d, dev, x.Err())
				}
				return
			}
			runUnsignedElementwise(t, dev, d)
			runUnsignedReductions(t, dev, d)
			runUnsignedLayout(t, dev, d)
		})
	}
}

// unsignedSamples are operands a and b (b nonzero) with d's extremes.
func unsignedSamples(d core.DType) (a, b []uint64) {
	if d == core.U16 {
		return []uint64{0, 1, 65535, 32768, 40000, 7, 12345, 65534},
			[]uint64{3, 65535, 2, 32768, 7, 65535, 1, 300}
	}
	return []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<53 + 1, 12345678901234567890, 7, 1<<63 - 1},
		[]uint64{3, math.MaxUint64, 2, 1<<63 + 5, 3, 1 << 32, 1, 1 << 63}
}

// unsignedTensor is vals as a 1-d tensor of d (each wrapped to d's width).
func unsignedTensor(dev core.Device, d core.DType, vals []uint64) *core.Tensor {
	raw := make([]byte, len(vals)*d.Size())
	for i, v := range vals {
		if d == core.U16 {
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
		} else {
			binary.LittleEndian.PutUint64(raw[8*i:], v)
		}
	}
	return core.FromBytes(d, core.Shape{len(vals)}, raw, dev)
}

// unsignedValues reads a tensor of any integer dtype as uint64, exactly.
func unsignedValues(t *testing.T, what string, x *core.Tensor) []uint64 {
	t.Helper()
	if err := x.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	v, err := x.Uint64s()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func expectUnsigned(t *testing.T, what string, x *core.Tensor, d core.DType, want []uint64) {
	t.Helper()
	got := unsignedValues(t, what, x)
	if x.DType() != d {
		t.Fatalf("%s: dtype %s, want %s", what, x.DType(), d)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func runUnsignedElementwise(t *testing.T, dev core.Device, d core.DType) {
	av, bv := unsignedSamples(d)
	a, b := unsignedTensor(dev, d, av), unsignedTensor(dev, d, bv)
	mask := uint64(math.MaxUint64)
	if d == core.U16 {
		mask = math.MaxUint16
	}
	bin := map[string]func(x, y uint64) uint64{
		"add": func(x, y uint64) uint64 { return x + y }, "sub": func(x, y uint64) uint64 { return x - y },
		"mul": func(x, y uint64) uint64 { return x * y }, "floor_divide": func(x, y uint64) uint64 { return x / y },
		"remainder": func(x, y uint64) uint64 { return x % y }, "maximum": func(x, y uint64) uint64 { return max(x, y) },
		"minimum": func(x, y uint64) uint64 { return min(x, y) }, "bitwise_and": func(x, y uint64) uint64 { return x & y },
		"bitwise_or": func(x, y uint64) uint64 { return x | y }, "bitwise_xor": func(x, y uint64) uint64 { return x ^ y },
	}
	for op, f := range bin {
		want := make([]uint64, len(av))
		for i := range av {
			want[i] = f(av[i], bv[i]) & mask
		}
		expectUnsigned(t, op, core.Call1(op, nil, a, b), d, want)
	}
	shifts := unsignedTensor(dev, d, []uint64{0, 1, 3, 15, 63 % uint64(8*d.Size()), 2, 1, 4})
	sv := unsignedValues(t, "shifts", shifts)
	right, left := make([]uint64, len(av)), make([]uint64, len(av))
	for i := range av {
		right[i], left[i] = av[i]>>sv[i], (av[i]<<sv[i])&mask
	}
	expectUnsigned(t, "bitwise_right_shift", core.Call1("bitwise_right_shift", nil, a, shifts), d, right)
	expectUnsigned(t, "bitwise_left_shift", core.Call1("bitwise_left_shift", nil, a, shifts), d, left)
	cmp := map[string]func(x, y uint64) bool{
		"lt": func(x, y uint64) bool { return x < y }, "le": func(x, y uint64) bool { return x <= y },
		"gt": func(x, y uint64) bool { return x > y }, "ge": func(x, y uint64) bool { return x >= y },
		"eq": func(x, y uint64) bool { return x == y }, "ne": func(x, y uint64) bool { return x != y },
	}
	for op, f := range cmp {
		want := make([]uint64, len(av))
		for i := range av {
			if f(av[i], bv[i]) {
				want[i] = 1
			}
		}
		expectUnsigned(t, op, core.Call1(op, nil, a, b), core.Bool, want)
	}
	sign, neg := make([]uint64, len(av)), make([]uint64, len(av))
	for i, x := range av {
		sign[i], neg[i] = min(x, 1), (-x)&mask
	}
	expectUnsigned(t, "abs", core.Call1("abs", nil, a), d, av)
	expectUnsigned(t, "relu", core.Call1("relu", nil, a), d, av)
	expectUnsigned(t, "sign", core.Call1("sign", nil, a), d, sign)
	expectUnsigned(t, "neg", core.Call1("neg", nil, a), d, neg)
	clamped := make([]uint64, len(av))
	for i, x := range av {
		clamped[i] = min(max(x, 2), 40000)
	}
	expectUnsigned(t, "clamp", core.Call1("clamp", core.Attrs{"min": 2.0, "max": 40000.0}, a), d, clamped)
	// Casts: to f64 rounds to nearest (2^53+1 becomes 2^53), back saturates.
	f := core.Call1("cast", core.Attrs{"dtype": core.F32}, a)
	fv, err := f.Float64s()
	if err != nil {
		t.Fatalf("cast to f32: %v", err)
	}
	for i, x := range av {
		if want := float64(float32(float64(x))); fv[i] != want && d == core.U16 {
			t.Fatalf("cast to f32: element %d is %v, want %v", i, fv[i], want)
		}
	}
	if b, _ := core.BackendFor(dev); slices.Contains(b.Capabilities().DTypes, core.F64) {
		g, err := core.Call1("cast", core.Attrs{"dtype": core.F64}, a).Float64s()
		if err != nil {
			t.Fatalf("cast to f64: %v", err)
		}
		for i, x := range av {
			if g[i] != float64(x) {
				t.Fatalf("cast to f64: element %d is %v, want %v", i, g[i], float64(x))
			}
		}
	}
	back := core.Call1("cast", core.Attrs{"dtype": d}, core.FromFloat64s(core.F32, core.Shape{4}, []float64{-3, 1.9, 1e30, math.NaN()}, dev))
	expectUnsigned(t, "cast f32 to "+d.String(), back, d, []uint64{0, 1, mask, 0})
	wide := core.Call1("cast", core.Attrs{"dtype": core.I64}, a)
	iv, err := wide.Int64s()
	if err != nil {
		t.Fatalf("cast to i64: %v", err)
	}
	for i, x := range av {
		if iv[i] != int64(x) {
			t.Fatalf("cast to i64: element %d is %d, want %d (the bits, wrapped)", i, iv[i], int64(x))
		}
	}
}

func runUnsignedReductions(t *testing.T, dev core.Device, d core.DType) {
	av, _ := unsignedSamples(d)
	a := unsignedTensor(dev, d, av)
	var sum, prod uint64 = 0, 1
	hi, lo, at, lat := av[0], av[0], 0, 0
	for i, x := range av {
		sum += x
		if x != 0 {
			prod *= x
		}
		if x > hi {
			hi, at = x, i
		}
		if x < lo {
			lo, lat = x, i
		}
	}
	expectUnsigned(t, "max", core.Call1("max", nil, a), d, []uint64{hi})
	expectUnsigned(t, "min", core.Call1("min", nil, a), d, []uint64{lo})
	expectUnsigned(t, "argmax", core.Call1("argmax", nil, a), core.I64, []uint64{uint64(at)})
	expectUnsigned(t, "argmin", core.Call1("argmin", nil, a), core.I64, []uint64{uint64(lat)})
	run := make([]uint64, len(av))
	var acc uint64
	for i, x := range av {
		acc += x
		run[i] = acc
	}
	// Sums of u16 and u64 are u64 (the array API's default unsigned
	// width): a device without u64 must say so.
	sums := map[string]*core.Tensor{"sum": core.Call1("sum", nil, a), "prod": core.Call1("prod", nil, unsignedTensor(dev, d, av[1:])),
		"cumsum": core.Call1("cumsum", core.Attrs{"axis": 0}, a)}
	if b, _ := core.BackendFor(dev); !slices.Contains(b.Capabilities().DTypes, core.U64) {
		for op, x := range sums {
			if x.Err() == nil || !strings.Contains(x.Err().Error(), "u64") {
				t.Fatalf("%s of %s on %v: want an error naming u64, got %v", op, d, dev, x.Err())
			}
		}
		return
	}
	expectUnsigned(t, "sum", sums["sum"], core.U64, []uint64{sum})
	expectUnsigned(t, "prod", sums["prod"], core.U64, []uint64{prod})
	expectUnsigned(t, "cumsum", sums["cumsum"], core.U64, run)
}

func runUnsignedLayout(t *testing.T, dev core.Device, d core.DType) {
	av, bv := unsignedSamples(d)
	a := unsignedTensor(dev, d, av)
	sorted := slices.Clone(av)
	slices.Sort(sorted)
	outs, err := core.Call("sort", []*core.Tensor{a}, core.Attrs{"axis": 0})
	if err != nil {
		t.Fatalf("sort: %v", err)
	}
	expectUnsigned(t, "sort", outs[0], d, sorted)
	uniq := slices.Compact(slices.Clone(sorted))
	u, err := core.Call("unique", []*core.Tensor{unsignedTensor(dev, d, append(slices.Clone(av), av...))}, core.Attrs{"sorted": true})
	if err != nil {
		t.Fatalf("unique: %v", err)
	}
	expectUnsigned(t, "unique", u[0], d, uniq)
	top, err := core.Call("topk", []*core.Tensor{a}, core.Attrs{"k": 2, "axis": 0})
	if err != nil {
		t.Fatalf("topk: %v", err)
	}
	expectUnsigned(t, "topk", top[0], d, []uint64{sorted[len(sorted)-1], sorted[len(sorted)-2]})
	cond := core.Call1("gt", nil, a, unsignedTensor(dev, d, bv))
	pick := make([]uint64, len(av))
	for i := range av {
		pick[i] = bv[i]
		if av[i] > bv[i] {
			pick[i] = av[i]
		}
	}
	expectUnsigned(t, "where", core.Call1("where", nil, cond, a, unsignedTensor(dev, d, bv)), d, pick)
	idx := unsignedTensor(dev, d, []uint64{7, 0, 2})
	expectUnsigned(t, "index_select", core.Call1("index_select", core.Attrs{"axis": 0}, a, idx), d, []uint64{av[7], av[0], av[2]})
	bad := core.Call1("index_select", core.Attrs{"axis": 0}, a, unsignedTensor(dev, d, []uint64{uint64(math.MaxUint64) >> (64 - 8*d.Size())}))
	if _, err := bad.Uint64s(); bad.Err() == nil && err == nil { // a GPU may report it when the result is read
		t.Fatalf("index_select with index %d of %s: want an out-of-range error", uint64(math.MaxUint64)>>(64-8*d.Size()), d)
	}
	full := core.Call1("full", core.Attrs{"shape": []int{2}, "value": 40000.0, "dtype": d, "device": dev.String()})
	expectUnsigned(t, "full", full, d, []uint64{40000, 40000})
	ar := core.Call1("arange", core.Attrs{"start": 3.0, "stop": 6.0, "step": 1.0, "dtype": d, "device": dev.String()})
	expectUnsigned(t, "arange", ar, d, []uint64{3, 4, 5})
}
