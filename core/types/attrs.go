package types

// Attrs holds attribute values by name. Call normalises user-supplied values
// (any Go integer, float64 holding an integer, []int64, dtype names) to the
// canonical types: int, float64, bool, string, []int, []float64, DType.
type Attrs map[string]any

// Has reports whether the attribute is present and not nil.
func (a Attrs) Has(name string) bool { v, ok := a[name]; return ok && v != nil }

// Int returns an int attribute (0 when absent).
func (a Attrs) Int(name string) int { v, _ := a[name].(int); return v }

// Float returns a float attribute (0 when absent), also one kept as an
// int (core.AttrSpec.KeepInt).
func (a Attrs) Float(name string) float64 {
	switch v := a[name].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return 0
}

// IntValue returns a float attribute kept as an int (core.AttrSpec.KeepInt)
// and true, or 0 and false when it holds a float or is absent.
func (a Attrs) IntValue(name string) (int, bool) { v, ok := a[name].(int); return v, ok }

// Bool returns a bool attribute (false when absent).
func (a Attrs) Bool(name string) bool { v, _ := a[name].(bool); return v }

// String returns a string attribute ("" when absent).
func (a Attrs) String(name string) string { v, _ := a[name].(string); return v }

// Ints returns an int-list attribute (nil when absent).
func (a Attrs) Ints(name string) []int { v, _ := a[name].([]int); return v }

// Floats returns a float-list attribute (nil when absent).
func (a Attrs) Floats(name string) []float64 { v, _ := a[name].([]float64); return v }

// DType returns a dtype attribute (Invalid when absent).
func (a Attrs) DType(name string) DType { v, _ := a[name].(DType); return v }

// Clone copies the map (values are treated as immutable).
func (a Attrs) Clone() Attrs {
	out := make(Attrs, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}
