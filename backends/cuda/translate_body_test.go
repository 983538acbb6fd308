package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/lower"
)

// Each statement of the body dialect in C++: declarations as const or
// mutable, auto where WGSL infers, expressions through translate.
func TestTranslateBodyStatements(t *testing.T) {
	for _, c := range []struct{ in, single, double string }{
		{"let a = x0(i) * 2.0; return a;", "const auto a = x0(i) * 2.0f;\nreturn a;", "const auto a = x0(i) * 2.0;\nreturn a;"},
		{"let a: u32 = i % 4u; return f32(a);", "const u32 a = i % 4u;\nreturn f32(a);", ""},
		{"var s = 0.0; s += abs(x0(i)); return s;", "auto s = 0.0f;\ns += w_abs(x0(i));\nreturn s;", "auto s = 0.0;\ns += w_abs(x0(i));\nreturn s;"},
		{"var h: i32; h = 3i; h--; return f32(h);", "i32 h = i32();\nh = 3;\nh--;\nreturn f32(h);", ""},
		{"var s = 0.0; for (var k = 0u; k < dim0(1u); k = k + 1u) { if (k == 2u) { continue; } s += max(x0(k), 0.5); } return s;",
			"auto s = 0.0f;\nfor (auto k = 0u; k < dim0(1u); k = k + 1u) {\n  if ((k == 2u)) {\n    continue;\n  }\n  s += w_max(x0(k), 0.5f);\n}\nreturn s;", ""},
		{"if i < 2u { return 1.0; } else if (i < 4u) { return 2.5; } else { return round(x0(i)); } return 0.0;",
			"if (i < 2u) {\n  return 1.0f;\n}\nelse if ((i < 4u)) {\n  return 2.5f;\n}\nelse {\n  return w_round(x0(i));\n}\nreturn 0.0f;", ""},
		{"var k = 0u; for (var j = 0u; j < 9u; j++) { if (x0u(j) == 0u) { break; } k <<= 1u; } return f32(k);",
			"auto k = 0u;\nfor (auto j = 0u; j < 9u; j++) {\n  if ((x0u(j) == 0u)) {\n    break;\n  }\n  k <<= 1u;\n}\nreturn f32(k);", ""},
	} {
		stmts, err := lower.ParseBody("op", c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, indented(c.single), translateBody(stmts, true), c.in)
		if c.double != "" {
			assert.Equal(t, indented(c.double), translateBody(stmts, false), c.in)
		}
	}
}

// indented is the expected text at the body's depth (one level in).
func indented(s string) string {
	out := ""
	for _, line := range splitLines(s) {
		out += "  " + line + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	return append(lines, s[start:])
}
