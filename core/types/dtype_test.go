package types

import (
	"strings"
	"testing"
)

// The array API standard's promotion table for the unsigned dtypes
// (2024.12, "Type Promotion Rules"), and the pairs it leaves undefined
// that we refuse.
func TestUnsignedPromotion(t *testing.T) {
	cases := []struct{ a, b, want DType }{
		{U16, U8, U16}, {U16, U32, U32}, {U16, U64, U64}, {U64, U8, U64}, {U64, U32, U64},
		{U16, I8, I32}, {U16, I16, I32}, {U16, I32, I32}, {U16, I64, I64},
		{U64, Bool, U64}, {U16, Bool, U16}, {U64, F32, F32}, {U16, F16, F16}, {U64, F64, F64}, {U64, C64, C64},
	}
	for _, c := range cases {
		for _, pair := range [][2]DType{{c.a, c.b}, {c.b, c.a}} {
			got, err := Promote(pair[0], pair[1])
			if err != nil || got != c.want {
				t.Errorf("Promote(%s, %s) = %s, %v; want %s", pair[0], pair[1], got, err, c.want)
			}
		}
	}
	for _, s := range []DType{I8, I16, I32, I64} {
		_, err := Promote(U64, s)
		if err == nil || !strings.Contains(err.Error(), "cannot promote u64 with "+s.String()) {
			t.Errorf("Promote(u64, %s): want a refusal naming both, got %v", s, err)
		}
		if PromoteTypes(s, U64) != Invalid {
			t.Errorf("PromoteTypes(%s, u64) should be Invalid", s)
		}
	}
}

func TestUnsignedDTypes(t *testing.T) {
	for name, want := range map[string]DType{"u16": U16, "uint16": U16, "torch.uint16": U16, "u64": U64, "uint64": U64} {
		if got, err := ParseDType(name); err != nil || got != want {
			t.Errorf("ParseDType(%q) = %s, %v; want %s", name, got, err, want)
		}
	}
	if _, err := ParseDType("uint128"); err == nil || !strings.Contains(err.Error(), "u16 u64") {
		t.Errorf("the error should list u16 and u64: %v", err)
	}
	// The C ABI's codes are these numbers.
	if U16 != 14 || U64 != 15 || U16.Size() != 2 || U64.Size() != 8 {
		t.Errorf("u16 = %d (%d bytes), u64 = %d (%d bytes); want 14 (2), 15 (8)", U16, U16.Size(), U64, U64.Size())
	}
	for _, d := range []DType{U16, U64} {
		if !d.Valid() || !d.IsInt() || d.IsSigned() || d.IsFloat() || d.IsInexact() {
			t.Errorf("%s: Valid %v IsInt %v IsSigned %v", d, d.Valid(), d.IsInt(), d.IsSigned())
		}
	}
	if DType(16).Valid() || U32.IsUnsigned64() || !U64.IsUnsigned64() {
		t.Error("dtype 16 is not valid; only u64 is IsUnsigned64")
	}
}
