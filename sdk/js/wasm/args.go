//go:build js && wasm

package main

import (
	"math"
	"syscall/js"

	"github.com/webtensor/webtensor/core"
)

// Bounds on what one call may pass, as in the C ABI.
const (
	maxDims     = 64
	maxInputs   = 1 << 12
	maxAttrList = 1 << 20
)

func arg(args []js.Value, i int, what string) (js.Value, error) {
	if i >= len(args) {
		return js.Undefined(), invalid("missing argument %d (%s)", i, what)
	}
	return args[i], nil
}

func intArg(args []js.Value, i int, what string) (int, error) {
	v, err := arg(args, i, what)
	if err != nil {
		return 0, err
	}
	return toInt(v, what)
}

func toInt(v js.Value, what string) (int, error) {
	if v.Type() != js.TypeNumber {
		return 0, invalid("%s must be a number, got %s", what, v.Type())
	}
	f := v.Float()
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, invalid("%s must be an integer, got %v", what, f)
	}
	return int(f), nil
}

func stringArg(args []js.Value, i int, what string) (string, error) {
	v, err := arg(args, i, what)
	if err != nil {
		return "", err
	}
	if v.Type() != js.TypeString {
		return "", invalid("%s must be a string, got %s", what, v.Type())
	}
	return v.String(), nil
}

func tensorArg(args []js.Value, i int) (*core.Tensor, error) {
	h, err := intArg(args, i, "tensor handle")
	if err != nil {
		return nil, err
	}
	return tensorOf(h)
}

func intList(v js.Value, what string, limit int) ([]int, error) {
	if !js.Global().Get("Array").Call("isArray", v).Bool() {
		return nil, invalid("%s must be an array, got %s", what, v.Type())
	}
	n := v.Length()
	if n > limit {
		return nil, invalid("%s has %d entries, at most %d", what, n, limit)
	}
	out := make([]int, n)
	for i := range out {
		x, err := toInt(v.Index(i), what)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func ints(xs []int) js.Value {
	a := make([]any, len(xs))
	for i, x := range xs {
		a[i] = x
	}
	return js.ValueOf(a)
}

// devicesArg parses an optional device name ("" or null: the default).
func deviceArg(args []js.Value, i int) ([]core.Device, error) {
	if i >= len(args) || args[i].IsNull() || args[i].IsUndefined() {
		return nil, nil
	}
	name, err := stringArg(args, i, "device")
	if err != nil {
		return nil, err
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return []core.Device{d}, nil
}

func dtypeOf(code int) (core.DType, error) {
	if code < 0 || code > 255 || !core.DType(code).Valid() {
		return 0, invalid("unknown dtype code %d", code)
	}
	return core.DType(code), nil
}

// attrsArg reads [[name, kind, value], ...] with the ABI's wt_attr kinds.
func attrsArg(v js.Value) (core.Attrs, error) {
	out := core.Attrs{}
	if v.IsUndefined() || v.IsNull() {
		return out, nil
	}
	for i := range v.Length() {
		a := v.Index(i)
		name, val := a.Index(0), a.Index(2)
		if name.Type() != js.TypeString || name.String() == "" {
			return nil, invalid("attribute %d has no name", i)
		}
		n := name.String()
		if _, dup := out[n]; dup {
			return nil, invalid("attribute %q given twice", n)
		}
		kind, err := toInt(a.Index(1), "attribute kind")
		if err != nil {
			return nil, err
		}
		x, err := attrValue(n, kind, val)
		if err != nil {
			return nil, err
		}
		out[n] = x
	}
	return out, nil
}

func attrValue(name string, kind int, v js.Value) (any, error) {
	what := "attribute " + name
	switch kind {
	case 1:
		return toInt(v, what)
	case 2:
		if v.Type() != js.TypeNumber {
			return nil, invalid("%s must be a number, got %s", what, v.Type())
		}
		return v.Float(), nil
	case 3:
		return v.Truthy(), nil
	case 4:
		if v.Type() != js.TypeString {
			return nil, invalid("%s must be a string, got %s", what, v.Type())
		}
		return v.String(), nil
	case 5:
		return intList(v, what, maxAttrList)
	case 6:
		n := v.Length()
		if n > maxAttrList {
			return nil, invalid("%s has %d entries, at most %d", what, n, maxAttrList)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = v.Index(i).Float()
		}
		return out, nil
	case 7:
		code, err := toInt(v, what)
		if err != nil {
			return nil, err
		}
		return dtypeOf(code)
	}
	return nil, invalid("%s: unknown kind %d", what, kind)
}
