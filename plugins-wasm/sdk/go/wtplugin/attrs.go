package wtplugin

import (
	"encoding/json"
	"fmt"
	"math"
)

// Attrs are a call's attributes as the host sends them: a JSON object with
// every attribute of the op, defaults filled in. The accessors convert JSON's
// numbers and lists; asking for an attribute the op does not declare, or as
// the wrong kind, panics with the name, which fails the call with that text.
type Attrs map[string]any

func decodeAttrs(raw []byte) (Attrs, error) {
	a := Attrs{}
	if len(raw) == 0 {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("attributes %q: %v", raw, err)
	}
	return a, nil
}

// withDefaults returns a with every declared attribute it lacks set to its
// default, so a kernel sees the same values natively and in the host.
func (a Attrs) withDefaults(specs []Attr) Attrs {
	out := Attrs{}
	for _, s := range specs {
		if s.Default != nil {
			out[s.Name] = s.Default
		}
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}

func (a Attrs) get(name string) any {
	v, ok := a[name]
	if !ok || v == nil {
		panic(fmt.Sprintf("attribute %s is not set (attributes: %v)", name, a))
	}
	return v
}

func (a Attrs) wrong(name, kind string) string {
	return fmt.Sprintf("attribute %s is %T %v, not %s", name, a[name], a[name], kind)
}

// Float is a float attribute. JSON has no infinities, so "inf", "-inf" and
// "nan" strings are accepted too.
func (a Attrs) Float(name string) float64 {
	switch v := a.get(name).(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	case int:
		return float64(v)
	case string:
		switch v {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
	}
	panic(a.wrong(name, "a float"))
}

// Int is an int attribute.
func (a Attrs) Int(name string) int {
	switch v := a.get(name).(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v)
		}
	case int:
		return v
	}
	panic(a.wrong(name, "an int"))
}

// Bool is a bool attribute.
func (a Attrs) Bool(name string) bool {
	if v, ok := a.get(name).(bool); ok {
		return v
	}
	panic(a.wrong(name, "a bool"))
}

// String is a string (or dtype) attribute.
func (a Attrs) String(name string) string {
	if v, ok := a.get(name).(string); ok {
		return v
	}
	panic(a.wrong(name, "a string"))
}

// Floats is a floats attribute.
func (a Attrs) Floats(name string) []float64 {
	list, ok := a.get(name).([]any)
	if !ok {
		if v, ok := a[name].([]float64); ok {
			return v
		}
		panic(a.wrong(name, "a list of floats"))
	}
	out := make([]float64, len(list))
	for i, e := range list {
		out[i] = Attrs{name: e}.Float(name)
	}
	return out
}

// Ints is an ints attribute.
func (a Attrs) Ints(name string) []int {
	list, ok := a.get(name).([]any)
	if !ok {
		if v, ok := a[name].([]int); ok {
			return v
		}
		panic(a.wrong(name, "a list of ints"))
	}
	out := make([]int, len(list))
	for i, e := range list {
		out[i] = Attrs{name: e}.Int(name)
	}
	return out
}
