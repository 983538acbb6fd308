package core

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/webtensor/webtensor/core/types"
)

// AttrKind is the type of an op attribute. It fixes how SDKs pass the value.
type AttrKind uint8

// Attribute kinds.
const (
	AttrInt AttrKind = iota + 1
	AttrFloat
	AttrBool
	AttrString
	AttrInts
	AttrFloats
	AttrDType
)

var attrKindNames = map[AttrKind]string{AttrInt: "int", AttrFloat: "float", AttrBool: "bool",
	AttrString: "string", AttrInts: "ints", AttrFloats: "floats", AttrDType: "dtype"}

func (k AttrKind) String() string { return attrKindNames[k] }

// AttrSpec declares one attribute: its type, default and, for strings, the
// accepted values. A nil Default with Required false means "absent" (for
// example axes=nil for "every axis").
type AttrSpec struct {
	Name     string
	Kind     AttrKind
	Default  any
	Required bool
	Enum     []string
	Doc      string
	// KeepInt, on a float attribute, keeps an integer value as an int
	// instead of a float64, so that it stays exact beyond 2^53 (arange's
	// bounds). Float reads it either way; IntValue tells which it is.
	KeepInt bool
}

// Attrs holds attribute values by name. Call normalises user-supplied values
// (any Go integer, float64 holding an integer, []int64, dtype names) to the
// canonical types: int, float64, bool, string, []int, []float64, DType
// (core/types declares it, with its accessors).
type Attrs = types.Attrs

// normalizeAttrs checks user attributes against the specs, converts them to
// canonical types and fills defaults.
func normalizeAttrs(op string, specs []AttrSpec, in Attrs) (Attrs, error) {
	out := make(Attrs, len(specs))
	known := make(map[string]bool, len(specs))
	for _, s := range specs {
		known[s.Name] = true
		v, ok := in[s.Name]
		if !ok || v == nil {
			if s.Required {
				return nil, fmt.Errorf("%s: missing required attribute %q (%s)", op, s.Name, s.Kind)
			}
			out[s.Name] = s.Default
			continue
		}
		cv, err := convertAttr(s.Kind, v)
		if s.KeepInt && s.Kind == AttrFloat && isGoInt(v) {
			cv, err = convertAttr(AttrInt, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: attribute %q: %v", op, s.Name, err)
		}
		if s.Kind == AttrString && len(s.Enum) > 0 && !slices.Contains(s.Enum, cv.(string)) {
			return nil, fmt.Errorf("%s: attribute %q is %q, want one of %v", op, s.Name, cv, s.Enum)
		}
		out[s.Name] = cv
	}
	var unknown []string
	for k := range in {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.Name
		}
		return nil, fmt.Errorf("%s: unknown attribute(s) %v (accepted: %v)", op, unknown, names)
	}
	return out, nil
}

// convertAll converts every element of x with conv (ints and floats
// attributes given as other slice types); false at the first element conv
// refuses.
func convertAll[S, D any](x []S, conv func(S) (D, bool)) ([]D, bool) {
	out := make([]D, len(x))
	for i, e := range x {
		v, ok := conv(e)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case int16:
		return int(x), true
	case int8:
		return int(x), true
	case uint8:
		return int(x), true
	case uint16:
		return int(x), true
	case uint32:
		return int(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int(x), true
	case uint:
		return toInt(uint64(x))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int(x), true
		}
	case float32:
		return toInt(float64(x))
	}
	return 0, false
}

// isGoInt reports whether v has one of Go's integer types.
func isGoInt(v any) bool {
	switch v.(type) {
	case int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		return true
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if i, ok := toInt(v); ok {
		return float64(i), true
	}
	return 0, false
}

func convertAttr(kind AttrKind, v any) (any, error) {
	bad := func() error { return fmt.Errorf("got %T %v, want %s", v, v, kind) }
	switch kind {
	case AttrInt:
		if i, ok := toInt(v); ok {
			return i, nil
		}
	case AttrFloat:
		if f, ok := toFloat(v); ok {
			return f, nil
		}
	case AttrBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case AttrString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case AttrDType:
		switch x := v.(type) {
		case DType:
			if x.Valid() {
				return x, nil
			}
		case string:
			return ParseDType(x)
		}
	case AttrInts:
		switch x := v.(type) {
		case []int:
			return slices.Clone(x), nil
		case Shape:
			return []int(slices.Clone(x)), nil
		case []int64:
			out, _ := convertAll(x, func(e int64) (int, bool) { return int(e), true })
			return out, nil
		case []any:
			if out, ok := convertAll(x, toInt); ok {
				return out, nil
			}
			return nil, bad()
		default:
			if i, ok := toInt(v); ok {
				return []int{i}, nil
			}
		}
	case AttrFloats:
		switch x := v.(type) {
		case []float64:
			return slices.Clone(x), nil
		case []float32:
			out, _ := convertAll(x, func(e float32) (float64, bool) { return float64(e), true })
			return out, nil
		case []any:
			if out, ok := convertAll(x, toFloat); ok {
				return out, nil
			}
			return nil, bad()
		default:
			if f, ok := toFloat(v); ok {
				return []float64{f}, nil
			}
		}
	}
	return nil, bad()
}

// NormalizeAttrs checks attributes given to op against its specs, converts
// them to canonical types and fills defaults, as a call does: for code
// (graph compilers) that hands a recorded call's attributes to a backend.
func NormalizeAttrs(op string, a Attrs) (Attrs, error) {
	def, ok := LookupOp(op)
	if !ok {
		return nil, fmt.Errorf("unknown op %q", op)
	}
	return normalizeAttrs(def.Name, def.Attrs, a)
}
