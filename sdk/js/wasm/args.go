//go:build js && wasm

package main

import (
	"math"
	"strconv"
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
)

// args are one call's JavaScript arguments, read and type-checked here;
// what they mean is abi's to check. noGrad is the caller's grad mode when
// the call was made (an async twin runs later, on its own goroutine).
type args struct {
	v      []js.Value
	noGrad bool
	async  bool // an async twin's call, on its own goroutine: it may wait
}

func (a args) at(i int, what string) (js.Value, error) {
	if i >= len(a.v) {
		return js.Undefined(), abi.Invalidf("missing argument %d (%s)", i, what)
	}
	return a.v[i], nil
}

// absent reports whether argument i is missing, null or undefined.
func (a args) absent(i int) bool {
	return i >= len(a.v) || a.v[i].IsNull() || a.v[i].IsUndefined()
}

func (a args) int(i int, what string) (int64, error) {
	v, err := a.at(i, what)
	if err != nil {
		return 0, err
	}
	return toInt(v, what)
}

func (a args) handle(i int) (int64, error) { return a.int(i, "handle") }

func (a args) bool(i int) bool { return i < len(a.v) && a.v[i].Truthy() }

func (a args) str(i int, what string) (string, error) {
	v, err := a.at(i, what)
	if err != nil {
		return "", err
	}
	if v.Type() != js.TypeString {
		return "", abi.Invalidf("%s must be a string, got %s", what, v.Type())
	}
	return v.String(), nil
}

// optStr is str where null or undefined stand for "" (a C NULL).
func (a args) optStr(i int, what string) (string, error) {
	if a.absent(i) {
		return "", nil
	}
	return a.str(i, what)
}

// uint64 reads a decimal string (or a safe integer Number).
func (a args) uint64(i int, what string) (uint64, error) {
	v, err := a.at(i, what)
	if err != nil {
		return 0, err
	}
	if v.Type() == js.TypeNumber {
		n, err := toInt(v, what)
		if err != nil || n < 0 {
			return 0, abi.Invalidf("%s must be an unsigned 64-bit integer, got %v", what, v.Float())
		}
		return uint64(n), nil
	}
	if v.Type() != js.TypeString {
		return 0, abi.Invalidf("%s must be a decimal string, got %s", what, v.Type())
	}
	n, err := strconv.ParseUint(v.String(), 10, 64)
	if err != nil {
		return 0, abi.Invalidf("%s %q is not an unsigned 64-bit integer", what, v.String())
	}
	return n, nil
}

// ints reads an array of integers (handles, extents); abi bounds its length.
func (a args) ints(i int, what string) ([]int64, error) {
	v, err := a.at(i, what)
	if err != nil {
		return nil, err
	}
	return intList(v, what)
}

// bytes reads a Uint8Array into Go memory (the module cannot see the
// page's); check, when given, sees the length before the copy.
func (a args) bytes(i int, what string, check func(n int) error) ([]byte, error) {
	v, err := a.uint8Array(i, what)
	if err != nil {
		return nil, err
	}
	n := v.Get("byteLength").Int()
	if check != nil {
		if err := check(n); err != nil {
			return nil, err
		}
	}
	out := make([]byte, n)
	js.CopyBytesToGo(out, v)
	return out, nil
}

func (a args) uint8Array(i int, what string) (js.Value, error) {
	v, err := a.at(i, what)
	if err != nil {
		return js.Undefined(), err
	}
	if !v.InstanceOf(js.Global().Get("Uint8Array")) {
		return js.Undefined(), abi.Invalidf("%s must be a Uint8Array, got %s", what, v.Type())
	}
	return v, nil
}

func toInt(v js.Value, what string) (int64, error) {
	if v.Type() != js.TypeNumber {
		return 0, abi.Invalidf("%s must be a number, got %s", what, v.Type())
	}
	f := v.Float()
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, abi.Invalidf("%s must be an integer, got %v", what, f)
	}
	return int64(f), nil
}

func isArray(v js.Value) bool { return js.Global().Get("Array").Call("isArray", v).Bool() }

// intList reads an array of integers; lists longer than any the ABI takes
// are refused before they are read.
func intList(v js.Value, what string) ([]int64, error) {
	if !isArray(v) {
		return nil, abi.Invalidf("%s must be an array, got %s", what, v.Type())
	}
	n := v.Length()
	if n > abi.MaxAttrList {
		return nil, abi.Invalidf("%s has %d entries, at most %d", what, n, abi.MaxAttrList)
	}
	out := make([]int64, n)
	for i := range out {
		x, err := toInt(v.Index(i), what)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func floatList(v js.Value, what string) ([]float64, error) {
	if !isArray(v) {
		return nil, abi.Invalidf("%s must be an array, got %s", what, v.Type())
	}
	n := v.Length()
	if n > abi.MaxAttrList {
		return nil, abi.Invalidf("%s has %d entries, at most %d", what, n, abi.MaxAttrList)
	}
	out := make([]float64, n)
	for i := range out {
		x := v.Index(i)
		if x.Type() != js.TypeNumber {
			return nil, abi.Invalidf("%s must hold numbers, got %s", what, x.Type())
		}
		out[i] = x.Float()
	}
	return out, nil
}

// jsAttrs are wt_op's attributes as [name, kind, value] arrays, kind a
// wt_attr_kind; abi decodes them as it does capi's wt_attr structs.
type jsAttrs struct{ v js.Value }

func (a jsAttrs) Len() int {
	if a.v.IsUndefined() || a.v.IsNull() || !isArray(a.v) {
		return 0
	}
	return a.v.Length()
}

func (a jsAttrs) At(i int) (abi.Attr, error) {
	e := a.v.Index(i)
	if !isArray(e) || e.Length() != 3 {
		return abi.Attr{}, abi.Invalidf("attribute %d must be [name, kind, value]", i)
	}
	var at abi.Attr
	if n := e.Index(0); n.Type() == js.TypeString {
		at.Name = n.String()
	}
	kind, err := toInt(e.Index(1), "attribute kind")
	if err != nil {
		return abi.Attr{}, err
	}
	at.Kind = abi.AttrKind(kind)
	v, what := e.Index(2), "attribute "+strconv.Quote(at.Name)
	switch at.Kind {
	case abi.AttrInt, abi.AttrDType:
		at.I, err = toInt(v, what)
	case abi.AttrFloat:
		if v.Type() != js.TypeNumber {
			return abi.Attr{}, abi.Invalidf("%s must be a number, got %s", what, v.Type())
		}
		at.F = v.Float()
	case abi.AttrBool:
		if v.Truthy() {
			at.I = 1
		}
	case abi.AttrString:
		if v.Type() != js.TypeString {
			return abi.Attr{}, abi.Invalidf("%s must be a string, got %s", what, v.Type())
		}
		at.S = v.String()
	case abi.AttrInts:
		at.Ints, err = intList(v, what)
	case abi.AttrFloats:
		at.Floats, err = floatList(v, what)
	}
	return at, err
}
