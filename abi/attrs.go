package abi

import "github.com/webtensor/webtensor/core"

// AttrKind is a wt_attr_kind.
type AttrKind int32

const (
	AttrInt    AttrKind = 1 // uses I
	AttrFloat  AttrKind = 2 // uses F
	AttrBool   AttrKind = 3 // uses I (0 or not)
	AttrString AttrKind = 4 // uses S
	AttrInts   AttrKind = 5 // uses Ints
	AttrFloats AttrKind = 6 // uses Floats
	AttrDType  AttrKind = 7 // uses I (a wt_dtype)
)

// Attr is one op attribute as a caller passes it: the wt_attr struct in Go
// types. Ints and Floats may view the caller's memory; they are copied
// before the call returns.
type Attr struct {
	Name   string
	Kind   AttrKind
	I      int64
	F      float64
	S      string
	Ints   []int64
	Floats []float64
}

// AttrList is an op call's attributes, read one at a time where the caller
// keeps them (wt_attr structs in C memory, [name, kind, value] arrays in
// JavaScript): At fails for an attribute the caller cannot even express
// (a NULL string), and decoding stops at the first error.
type AttrList interface {
	Len() int
	At(i int) (Attr, error)
}

// CheckAttrList bounds a list attribute's length before it is read.
func CheckAttrList(name string, n int64) error {
	if n < 0 || n > MaxAttrList {
		return Invalidf("attribute %q: list length %d out of range (0..%d)", name, n, MaxAttrList)
	}
	return nil
}

// decodeAttrs checks the attributes and converts them to core's values.
func decodeAttrs(l AttrList) (core.Attrs, error) {
	if l == nil {
		return nil, nil
	}
	n := l.Len()
	if err := CheckCount("n_attrs", int64(n), MaxAttrs); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil // core treats no attributes and an empty map alike
	}
	out := make(core.Attrs, n)
	for i := range n {
		a, err := l.At(i)
		if err != nil {
			return nil, err
		}
		if a.Name == "" {
			return nil, Invalidf("attribute %d has no name", i)
		}
		if _, dup := out[a.Name]; dup {
			return nil, Invalidf("attribute %q given twice", a.Name)
		}
		v, err := a.value()
		if err != nil {
			return nil, err
		}
		out[a.Name] = v
	}
	return out, nil
}

func (a Attr) value() (any, error) {
	switch a.Kind {
	case AttrInt:
		return int(a.I), nil
	case AttrFloat:
		return a.F, nil
	case AttrBool:
		return a.I != 0, nil
	case AttrString:
		return a.S, nil
	case AttrInts:
		if err := CheckAttrList(a.Name, int64(len(a.Ints))); err != nil {
			return nil, err
		}
		vals := make([]int, len(a.Ints))
		for i, v := range a.Ints {
			vals[i] = int(v)
		}
		return vals, nil
	case AttrFloats:
		if err := CheckAttrList(a.Name, int64(len(a.Floats))); err != nil {
			return nil, err
		}
		return append(make([]float64, 0, len(a.Floats)), a.Floats...), nil
	case AttrDType:
		if a.I < 0 || a.I > 255 || !core.DType(a.I).Valid() {
			return nil, Invalidf("attribute %q: unknown dtype code %d", a.Name, a.I)
		}
		return core.DType(a.I), nil
	}
	return nil, Invalidf("attribute %q: unknown kind %d (see wt_attr_kind)", a.Name, int(a.Kind))
}
