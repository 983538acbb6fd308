package plugins

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Hostile modules: each must fail with an error that says what is wrong and
// leave the host able to load and run a good plugin afterwards.

const (
	hostileDeadline = 300 * time.Millisecond
	hostileCap      = 16 << 20
)

func hostileHost(t *testing.T) *Host {
	return newTestHost(t, NewConfig().WithDeadline(hostileDeadline).WithMemoryLimit(hostileCap))
}

func i64p(v int64) *int64 { return &v }

// manifestEdit returns a fixture whose manifest is the good one with old
// replaced by new (once), checking that old occurs.
func manifestEdit(t *testing.T, f *fixture, old, new string) *fixture {
	require.Contains(t, f.manifest, old)
	f.manifest = strings.Replace(f.manifest, old, new, 1)
	return f
}

func TestHostileModulesFailToLoad(t *testing.T) {
	h := hostileHost(t)
	wasiFn := func(name string, params, results []byte) wasmImportSpec {
		return wasmImportSpec{module: wasiModule, name: name, params: params, results: results}
	}
	cases := []struct {
		name string
		make func(f *fixture) []byte
		want []string
	}{
		{"malformed binary", func(*fixture) []byte { return []byte("\x00asm\x01\x00\x00\x00garbage") },
			[]string{"cannot compile"}},
		{"not wasm at all", func(*fixture) []byte { return []byte("#!/bin/sh\nrm -rf /\n") }, []string{"cannot compile"}},
		{"truncated", func(f *fixture) []byte { w := f.wasm(); return w[:len(w)/2] }, []string{"cannot compile"}},
		{"trailing junk", func(f *fixture) []byte { f.rawAppend = []byte{0x0b, 0xff, 0xff}; return f.wasm() },
			[]string{"cannot compile"}},
		{"imports env function", func(f *fixture) []byte {
			f.imports = []wasmImportSpec{{module: "env", name: "something"}}
			return f.wasm()
		}, []string{"imports function env.something", "does not provide"}},
		{"imports env memory", func(f *fixture) []byte {
			f.imports = []wasmImportSpec{{module: "env", name: "memory", kind: 2}}
			f.noMemory = true
			return f.wasm()
		}, []string{"imports memory env.memory"}},
		{"imports unknown WASI function", func(f *fixture) []byte {
			f.imports = []wasmImportSpec{wasiFn("open_the_door", nil, nil)}
			return f.wasm()
		}, []string{"imports function wasi_snapshot_preview1.open_the_door, which WASI preview 1 does not define"}},
		{"imports a WASI function with a wrong signature", func(f *fixture) []byte {
			f.imports = []wasmImportSpec{wasiFn("fd_write", []byte{tI64}, nil)}
			return f.wasm()
		}, []string{"imports wasi_snapshot_preview1.fd_write as (i64), WASI defines it as (i32, i32, i32, i32) -> i32"}},
		{"memory not exported", func(f *fixture) []byte { f.memExport = "heap"; return f.wasm() },
			[]string{`does not export its memory as "memory"`}},
		{"memory larger than the cap", func(f *fixture) []byte { f.memMin = 1000; return f.wasm() },
			[]string{"cannot compile", "over limit"}},
		{"missing wt_kernel", func(f *fixture) []byte { f.omit = map[string]bool{"wt_kernel": true}; return f.wasm() },
			[]string{"does not export wt_kernel (i32, i32) -> i32"}},
		{"wt_alloc with a wrong signature", func(f *fixture) []byte {
			f.retype = map[string]wasmFunc{"wt_alloc": {params: []byte{tI64}, results: []byte{tI64}, body: i64c(0)}}
			return f.wasm()
		}, []string{"exports wt_alloc as (i64) -> i64, want (i32) -> i32"}},
		{"a command, not a reactor", func(f *fixture) []byte {
			f.extra = []wasmFunc{{export: "_start"}}
			return f.wasm()
		}, []string{"is a command", "_initialize"}},
		{"_initialize loops forever", func(f *fixture) []byte {
			f.extra = []wasmFunc{{export: "_initialize", body: code(opLoop, blockEmpty, opBr, 0, opEnd)}}
			return f.wasm()
		}, []string{"_initialize", "deadline"}},
		{"_initialize traps", func(f *fixture) []byte {
			f.extra = []wasmFunc{{export: "_initialize", body: code(opUnreachable)}}
			return f.wasm()
		}, []string{"_initialize", "trapped", "unreachable"}},
		{"ABI version 2", func(f *fixture) []byte { f.abi = 2; return f.wasm() },
			[]string{"wt_plugin_abi returned 2, this host implements ABI 1"}},
		{"wt_manifest points outside memory", func(f *fixture) []byte {
			f.manifestRet = i64p(packed(0xffff0000, 100))
			return f.wasm()
		}, []string{"wt_manifest returned a pointer and length that are not in memory", "[4294901760, 4294901860)"}},
		{"wt_manifest length past the end", func(f *fixture) []byte {
			f.manifestRet = i64p(packed(manifestAt, 2*pageSize))
			return f.wasm()
		}, []string{"not in memory"}},
		{"wt_manifest length over the limit", func(f *fixture) []byte {
			f.manifestRet = i64p(packed(0, 0xffffffff))
			return f.wasm()
		}, []string{"length of 4294967295 bytes, more than the 16777216 allowed"}},
		{"manifest not JSON", func(f *fixture) []byte { f.manifest = "ops: [add1]"; return f.wasm() },
			[]string{"manifest is not the JSON ABI.md describes"}},
		{"manifest not UTF-8", func(f *fixture) []byte { f.manifest = "{\"abi\": 1, \"name\": \"\xff\"}"; return f.wasm() },
			[]string{"not valid UTF-8"}},
		{"manifest with trailing data", func(f *fixture) []byte { f.manifest += "{}"; return f.wasm() },
			[]string{"trailing data"}},
		{"manifest misses abi", func(f *fixture) []byte { return manifestEdit(t, f, `"abi": 1, `, "").wasm() },
			[]string{`missing "abi"`}},
		{"manifest abi 2", func(f *fixture) []byte { return manifestEdit(t, f, `"abi": 1`, `"abi": 2`).wasm() },
			[]string{"abi is 2, this host implements 1"}},
		{"manifest misses version", func(f *fixture) []byte {
			return manifestEdit(t, f, `"version": "1.2.3",`, "").wasm()
		}, []string{`missing "version"`}},
		{"manifest misses ops", func(f *fixture) []byte {
			f.manifest = `{"abi": 1, "name": "x", "version": "1"}`
			return f.wasm()
		}, []string{`missing "ops"`}},
		{"manifest has a bad plugin name", func(f *fixture) []byte {
			f.manifest = `{"abi": 1, "name": "no spaces", "version": "1", "ops": []}`
			return f.wasm()
		}, []string{`name "no spaces" is not an identifier`}},
		{"manifest with an unknown field", func(f *fixture) []byte {
			return manifestEdit(t, f, `"outputs": [{"name": "y", "shape": "input:0", "dtype": "input:0"}],
     "backward"`, `"output": [], "backward"`).wasm()
		}, []string{`unknown field "output"`}},
		{"op misses doc", func(f *fixture) []byte { return manifestEdit(t, f, `"doc": "Always fails.",`, "").wasm() },
			[]string{".fail): missing \"doc\""}},
		{"op name without the plugin prefix", func(f *fixture) []byte {
			return manifestEdit(t, f, `"name": "`+f.plugin+`.fail"`, `"name": "other.fail"`).wasm()
		}, []string{`name "other.fail" must be "bad`}},
		{"op declared twice", func(f *fixture) []byte {
			return manifestEdit(t, f, `"name": "`+f.plugin+`.fail"`, `"name": "`+f.plugin+`.add1"`).wasm()
		}, []string{"add1 is declared twice"}},
		{"op misses outputs", func(f *fixture) []byte {
			return manifestEdit(t, f, `"outputs": [{"name": "y", "shape": "input:0", "dtype": "input:0"}]}`, `"inputs": []}`).wasm()
		}, []string{`missing "outputs"`}},
		{"output misses shape", func(f *fixture) []byte {
			return manifestEdit(t, f, `"shape": "input:0", "dtype": "input:0"}]}`, `"dtype": "input:0"}]}`).wasm()
		}, []string{`missing "shape"`}},
		{"shape rule out of range", func(f *fixture) []byte {
			return manifestEdit(t, f, `"shape": "input:0", "dtype": "input:0"}]}`, `"shape": "input:3", "dtype": "input:0"}]}`).wasm()
		}, []string{`"input:3" names input 3, the op has 1 input(s)`}},
		{"shape rule unknown", func(f *fixture) []byte {
			return manifestEdit(t, f, `"shape": "input:0"`, `"shape": "same"`).wasm()
		}, []string{`"same" is not a rule`}},
		{"shape rule not a number", func(f *fixture) []byte {
			return manifestEdit(t, f, `"shape": "input:0"`, `"shape": "input:-1"`).wasm()
		}, []string{`"-1" is not an input number`}},
		{"dtype rule unknown", func(f *fixture) []byte {
			return manifestEdit(t, f, `"dtype": "input:0"`, `"dtype": "float128"`).wasm()
		}, []string{`dtype rule: unknown dtype "float128"`}},
		{"input dtype unknown", func(f *fixture) []byte {
			return manifestEdit(t, f, `"dtypes": ["f32"]`, `"dtypes": ["float32"]`).wasm()
		}, []string{`unknown dtype "float32"`}},
		{"input dtype without an ABI code", func(f *fixture) []byte { // ABI version 1 stops at bool
			return manifestEdit(t, f, `"dtypes": ["f32"]`, `"dtypes": ["u64"]`).wasm()
		}, []string{`unknown dtype "u64"`}},
		{"attr kind unknown", func(f *fixture) []byte {
			return manifestEdit(t, f, `"kind": "float"`, `"kind": "complex"`).wasm()
		}, []string{`kind "complex" is not one of`}},
		{"attr default of the wrong kind", func(f *fixture) []byte {
			return manifestEdit(t, f, `"kind": "int", "default": 3}`, `"kind": "int", "default": 3.5}`).wasm()
		}, []string{"attr 1 (n): default 3.5: 3.5 is not an integer"}},
		{"attr default outside its enum", func(f *fixture) []byte {
			return manifestEdit(t, f, `"default": "a"`, `"default": "z"`).wasm()
		}, []string{`default "z" is not in the enum [a b]`}},
		{"attr named like a backward name", func(f *fixture) []byte {
			return manifestEdit(t, f, `{"name": "k", "kind": "int"`, `{"name": "grad", "kind": "int"`).wasm()
		}, []string{`the name "grad" is reserved`}},
		{"backward of an unknown input", func(f *fixture) []byte {
			return manifestEdit(t, f, `"backward": {"x": "grad"}`, `"backward": {"q": "grad"}`).wasm()
		}, []string{`backward names "q", which is not an input`}},
		{"backward expression that does not compile", func(f *fixture) []byte {
			return manifestEdit(t, f, `"backward": {"x": "grad"}`, `"backward": {"x": "nosuchop(grad)"}`).wasm()
		}, []string{`unknown op "nosuchop"`}},
		{"infer rule without wt_infer", func(f *fixture) []byte { f.omit = map[string]bool{"wt_infer": true}; return f.wasm() },
			[]string{`shape rule "infer" but the module does not export wt_infer`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(uniq("bad"))
			_, err := h.Load(context.Background(), "hostile.wasm", c.make(f))
			require.Error(t, err)
			t.Log(err)
			assert.Contains(t, err.Error(), "plugin ")
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "\n", "one line")
			_, registered := core.LookupOp(f.plugin + ".add1")
			assert.False(t, registered, "a refused plugin registers nothing")
			requireUsable(t, h)
		})
	}
}

func TestHostileKernels(t *testing.T) {
	h := hostileHost(t)
	spin := code(opLoop, blockEmpty, opBr, 0, opEnd, i32c(0))
	cases := []struct {
		name   string
		kernel []byte
		want   []string
	}{
		{"infinite loop", spin, []string{"wt_kernel", "deadline", "300ms", "instantiated afresh"}},
		{"memory bomb", code(opLoop, blockEmpty, i32c(1), opMemoryGrow, 0, opDrop, opBr, 0, opEnd, i32c(0)),
			[]string{"wt_kernel", "deadline"}},
		{"out-of-bounds load", code(i32c(-1), load32(0)), []string{"wt_kernel trapped", "out of bounds memory access"}},
		{"unreachable", code(opUnreachable), []string{"wt_kernel trapped", "unreachable"}},
		{"division by zero", code(i32c(1), i32c(0), 0x6e), []string{"wt_kernel trapped", "divide by zero"}},
		{"stack overflow", nil, []string{"wt_kernel trapped", "stack"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(uniq("hostile"))
			k := c.kernel
			f.kernel = func(f *fixture) []byte {
				if k == nil { // recurse forever
					return code(lget(0), lget(1), call(f.fn(fnKernel)))
				}
				return k
			}
			p, err := h.Load(context.Background(), "hostile.wasm", f.wasm())
			require.NoError(t, err)
			x := core.FromSlice([]float32{1, 2}, core.Shape{2})
			for range 2 { // the second call runs on a fresh instance and fails the same way
				_, err = core.Call(p.Name()+".add1", []*core.Tensor{x}, nil)
				require.Error(t, err)
				t.Log(err)
				for _, w := range c.want {
					assert.Contains(t, err.Error(), w)
				}
				assert.Contains(t, err.Error(), p.Name()+".add1: plugin "+p.Name()+": ")
			}
			requireUsable(t, h)
		})
	}
}

func TestTrapLeavesOtherOpsWorking(t *testing.T) {
	h := hostileHost(t)
	f := newFixture(uniq("traponce"))
	f.kernel = func(f *fixture) []byte {
		// op 1 traps instead of failing politely; the rest is the good kernel.
		return code(lget(0), i32c(1), opI32Eq, opIf, blockEmpty, opUnreachable, opEnd, goodKernel(f))
	}
	p, err := h.Load(context.Background(), "t.wasm", f.wasm())
	require.NoError(t, err)
	checkAdd1(t, p.Name(), []float32{1})
	_, err = core.Call(p.Name()+".fail", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "unreachable")
	p.pool.mu.Lock()
	assert.Zero(t, p.pool.live, "the trapped instance was dropped")
	p.pool.mu.Unlock()
	checkAdd1(t, p.Name(), []float32{2, 3}) // on a fresh instance
}

func TestMemoryCapHolds(t *testing.T) {
	// The default deadline: 256 grows, each copying the memory, can outlast
	// the hostile 300 ms under -race on a busy machine.
	h := newTestHost(t, NewConfig().WithMemoryLimit(hostileCap))
	f := newFixture(uniq("grow"))
	// Grow one page at a time until memory.grow says no, then fail politely.
	f.kernel = func(*fixture) []byte {
		return code(opBlock, blockEmpty, opLoop, blockEmpty,
			i32c(1), opMemoryGrow, 0, i32c(-1), opI32Eq, opBrIf, 1, opBr, 0, opEnd, opEnd, i32c(5))
	}
	p, err := h.Load(context.Background(), "g.wasm", f.wasm())
	require.NoError(t, err)
	_, err = core.Call(p.Name()+".add1", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "wt_kernel returned 5")
	var sizes []uint32
	p.pool.mu.Lock()
	for _, inst := range p.pool.idle {
		sizes = append(sizes, inst.mem.Size())
	}
	p.pool.mu.Unlock()
	assert.Equal(t, []uint32{hostileCap}, sizes, "memory stops at the cap")
	requireUsable(t, h)
}

func TestAllocationsPastTheCap(t *testing.T) {
	h := hostileHost(t)
	p := loadGood(t, h)
	op := p.Name() + ".add1"
	big := func(n int) *core.Tensor { return core.FromSlice(make([]float32, n), core.Shape{n}) }

	// More than the cap: refused before the module runs.
	_, err := core.Call(op, []*core.Tensor{big(3 << 20)}, nil)
	assert.ErrorContains(t, err, "more than its 16 MiB cap")

	// Fits the cap, but the bump allocator (whose wt_free does nothing)
	// already holds the first block: wt_alloc returns 0. The instance is
	// dropped, and the next call starts with empty memory and succeeds.
	_, err = core.Call(op, []*core.Tensor{big(3 << 19)}, nil)
	require.NoError(t, err)
	_, err = core.Call(op, []*core.Tensor{big(7 << 18)}, nil)
	assert.ErrorContains(t, err, "returned 0: out of memory (the cap is 16 MiB)")
	_, err = core.Call(op, []*core.Tensor{big(7 << 18)}, nil)
	assert.NoError(t, err)
	checkAdd1(t, p.Name(), []float32{1})
}

func TestLyingPointers(t *testing.T) {
	h := hostileHost(t)
	cases := []struct {
		name string
		edit func(f *fixture)
		op   string
		want []string
	}{
		{"wt_error outside memory", func(f *fixture) { f.errorRet = i64p(packed(0x7ffffff0, 64)) }, "fail",
			[]string{"wt_error returned a pointer and length that are not in memory"}},
		{"wt_error too long", func(f *fixture) { f.errorRet = i64p(packed(0, 1<<20)) }, "fail",
			[]string{"wt_error: returned a length of 1048576 bytes"}},
		{"wt_alloc misaligned", func(f *fixture) { f.alloc = i32c(12345) }, "add1", []string{"wt_alloc(4096) returned 12345, which is not 8-byte aligned"}},
		{"wt_alloc outside memory", func(f *fixture) { f.alloc = i32c(0x7ffffff8) }, "add1",
			[]string{"wt_alloc(4096) returned 2147483640: [2147483640, 2147487736) is outside the module's memory of 131072 bytes"}},
		{"wt_alloc refuses", func(f *fixture) { f.alloc = i32c(0) }, "add1", []string{"returned 0: out of memory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(uniq("liar"))
			c.edit(f)
			p, err := h.Load(context.Background(), "l.wasm", f.wasm())
			require.NoError(t, err)
			_, err = core.Call(p.Name()+"."+c.op, []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
			require.Error(t, err)
			t.Log(err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			requireUsable(t, h)
		})
	}
}

func TestLyingInfer(t *testing.T) {
	h := hostileHost(t)
	cases := []struct {
		name   string
		answer string
		ret    *int64
		want   string
	}{
		{"negative dim", `[{"shape": [-1], "dtype": "u8"}]`, nil, "has dimension -1"},
		{"huge dim", `[{"shape": [1099511627776], "dtype": "u8"}]`, nil, "has dimension 1099511627776"},
		{"huge product", `[{"shape": [65536, 65536, 65536], "dtype": "u8"}]`, nil, "more elements than the plugin's 16 MiB memory can hold"},
		{"rank 9", `[{"shape": [1, 1, 1, 1, 1, 1, 1, 1, 1], "dtype": "u8"}]`, nil, "rank 9 exceeds the ABI's 8"},
		{"too few outputs", `[]`, nil, "answer has 0 entries, the op has 1 output(s)"},
		{"too many outputs", `[{"shape": [1]}, {"shape": [1]}]`, nil, "answer has 2 entries"},
		{"not JSON", `shape=1`, nil, "answer is not a JSON list"},
		{"not a list", `{"shape": [1]}`, nil, "answer is not a JSON list"},
		{"missing shape", `[{"dtype": "u8"}]`, nil, "output 0: missing shape"},
		{"fractional dim", `[{"shape": [1.5], "dtype": "u8"}]`, nil, "answer is not a JSON list"},
		{"dtype contradicts the rule", `[{"shape": [4], "dtype": "f32"}]`, nil, "answered dtype f32 for output y, the manifest's rule gives u8"},
		{"unknown dtype", `[{"shape": [4], "dtype": "f128"}]`, nil, `unknown dtype "f128"`},
		{"answer outside memory", `[]`, i64p(packed(0xfffffff0, 100)), "wt_infer returned a pointer and length that are not in memory"},
		{"fails with a message", `[]`, i64p(0), "wt_infer failed: failed on purpose"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(uniq("inferliar"))
			f.inferAnswer, f.inferRet = c.answer, c.ret
			p, err := h.Load(context.Background(), "i.wasm", f.wasm())
			require.NoError(t, err)
			_, err = core.Call(p.Name()+".infer_echo", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
			require.Error(t, err)
			t.Log(err)
			assert.Contains(t, err.Error(), p.Name()+".infer_echo")
			assert.Contains(t, err.Error(), c.want)
			checkAdd1(t, p.Name(), []float32{1}) // the plugin's other ops still work
			requireUsable(t, h)
		})
	}
}

func TestProcExitIsAnError(t *testing.T) {
	h := hostileHost(t)
	f := newFixture(uniq("exit"))
	f.imports = []wasmImportSpec{{module: wasiModule, name: "proc_exit", params: []byte{tI32}}}
	f.kernel = func(*fixture) []byte { return code(i32c(3), call(0), i32c(0)) }
	p, err := h.Load(context.Background(), "e.wasm", f.wasm())
	require.NoError(t, err)
	_, err = core.Call(p.Name()+".add1", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "the module exited with code 3")
	requireUsable(t, h)
}

func TestInferUnderTheDeadline(t *testing.T) {
	h := hostileHost(t)
	f := newFixture(uniq("slowinfer"))
	f.retype = map[string]wasmFunc{"wt_infer": {params: []byte{tI32, tI32, tI32}, results: []byte{tI64},
		body: code(opLoop, blockEmpty, opBr, 0, opEnd, i64c(0))}}
	p, err := h.Load(context.Background(), "s.wasm", f.wasm())
	require.NoError(t, err)
	_, err = core.Call(p.Name()+".infer_echo", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "wt_infer: context deadline exceeded: ran longer than the 300ms deadline")
	checkAdd1(t, p.Name(), []float32{1})
}
