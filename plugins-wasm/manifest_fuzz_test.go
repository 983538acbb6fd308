package plugins

import (
	"strings"
	"testing"

	_ "github.com/webtensor/webtensor/backends/cpu"
)

// maxErrorLen bounds a load error: a manifest may be 16 MB, and an error
// that quotes it whole is useless in a log and costly to carry.
const maxErrorLen = 2048

// deepManifest is a manifest whose op's backward expression for x is expr.
func deepManifest(expr string) string {
	return `{"abi": 1, "name": "fz", "version": "0", "ops": [{"name": "fz.op", "doc": "d",
	  "inputs": [{"name": "x"}], "attrs": [{"name": "k", "kind": "float", "default": 1}],
	  "outputs": [{"name": "y", "shape": "input:0", "dtype": "input:0"}],
	  "backward": {"x": "` + expr + `"}}]}`
}

// FuzzManifest feeds manifests to the parser and compiles each op's backward
// expressions, as a load does before registering anything. Nothing may
// panic or exhaust the stack (deep nesting of calls, attribute lists and JSON
// itself is seeded), and every refusal is one bounded line.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(goodManifest("fz")))
	f.Add([]byte(deepManifest("mul(grad, add(sigmoid(mul(x, k)), 1))")))
	f.Add([]byte(deepManifest("sum(grad, axes=[0, -1], keepdim=true)")))
	f.Add([]byte(deepManifest(nestCalls("neg", "grad", 20_000))))
	f.Add([]byte(deepManifest(nestCalls("add", "grad, x", maxExprDepth))))
	f.Add([]byte(deepManifest("sum(grad, axes=" + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + ")")))
	f.Add([]byte(deepManifest("add(grad" + strings.Repeat(", x", maxExprNodes) + ")")))
	f.Add([]byte(`{"abi": 1, "name": "fz", "version": "0", "ops": ` + strings.Repeat("[", 20_000) + "}"))
	f.Add([]byte(`{"abi": 1, "name": "fz", "version": "0", "ops": [{"name": "fz.` + strings.Repeat("n", 100_000) + `"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		spec, err := parseManifest(raw)
		if err != nil {
			checkErrorLine(t, err)
			return
		}
		for _, op := range spec.ops {
			if _, err := opDef(op, &opBinding{key: op.key}); err != nil {
				checkErrorLine(t, err)
			}
		}
	})
}

func checkErrorLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if len(msg) > maxErrorLen {
		t.Fatalf("an error of %d bytes (more than %d): %.200s...", len(msg), maxErrorLen, msg)
	}
	if strings.Contains(msg, "\n") {
		t.Fatalf("an error of several lines: %q", msg)
	}
}

// FuzzCodeCheck feeds modules to the compile pre-pass, which must end in
// time linear in the input, without panicking, however the bytes lie about
// sizes and nesting.
func FuzzCodeCheck(f *testing.F) {
	f.Add(newFixture("fz").wasm())
	f.Add(nestedBlocksFixture("fz", opLoop, 1000).wasm())
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0a\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		st, err := checkCode(wasm, 100)
		if err == nil && st.maxBlocks > 100 {
			t.Fatalf("a function of %d blocks passed a limit of 100", st.maxBlocks)
		}
	})
}
