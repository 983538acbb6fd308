package plugins

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The fixture plugin, hand-assembled: a bump allocator, a manifest in a data
// segment and a wt_kernel that serves five ops:
//
//	0 <p>.add1        y = x + 1 (f32), differentiable
//	1 <p>.fail        returns 7; wt_error says "failed on purpose"
//	2 <p>.record      copies its own call record into y (u8)
//	3 <p>.attrs       copies the attributes JSON into y (u8)
//	4 <p>.infer_echo  y's shape comes from wt_infer, which saves its request;
//	                  the kernel copies that request into y (state across
//	                  calls, which ABI.md forbids: it holds only while no
//	                  other call runs, when the pool, last in first out,
//	                  hands the kernel the instance wt_infer ran on)
//
// Hostile variants replace one piece.

// Static memory layout of the fixture.
const (
	errMsgAt   = 16
	answerAt   = 256
	iovecAt    = 2048
	requestAt  = 4096
	requestMax = 4096
	manifestAt = 8192
	heapStart  = 65536
)

// Defined functions, in order (after any imported functions).
const (
	fnABI = iota
	fnAlloc
	fnFree
	fnManifest
	fnKernel
	fnError
	fnInfer
	fnCopy
	fnMin
)

var exportNames = []string{"wt_plugin_abi", "wt_alloc", "wt_free", "wt_manifest", "wt_kernel", "wt_error", "wt_infer"}

type fixture struct {
	plugin      string
	manifest    string
	abi         int32
	kernel      func(f *fixture) []byte // nil: the good kernel
	alloc       []byte                  // nil: the bump allocator
	manifestRet *int64
	errorRet    *int64
	inferRet    *int64
	inferAnswer string
	errMsg      string
	imports     []wasmImportSpec
	memMin      uint32
	memMax      int64
	memExport   string
	noMemory    bool
	omit        map[string]bool
	extra       []wasmFunc
	retype      map[string]wasmFunc // replace an export's signature and body
	rawAppend   []byte
}

var fixtureSeq atomic.Int32

// uniq gives each test plugin its own name: the registry is process-wide.
func uniq(prefix string) string { return fmt.Sprintf("%s%d", prefix, fixtureSeq.Add(1)) }

func newFixture(plugin string) *fixture {
	return &fixture{plugin: plugin, manifest: goodManifest(plugin), abi: 1,
		inferAnswer: `[{"shape": [1024], "dtype": "u8"}]`, errMsg: "failed on purpose",
		memMin: 2, memMax: -1, memExport: "memory"}
}

func goodManifest(p string) string {
	r := strings.NewReplacer("P.", p+".", `"P"`, `"`+p+`"`)
	return r.Replace(`{
  "abi": 1, "name": "P", "version": "1.2.3",
  "ops": [
    {"name": "P.add1", "doc": "x + 1, elementwise.",
     "inputs": [{"name": "x", "dtypes": ["f32"]}],
     "outputs": [{"name": "y", "shape": "input:0", "dtype": "input:0"}],
     "backward": {"x": "grad"},
     "wgsl": "@compute @workgroup_size(64) fn main() {}"},
    {"name": "P.fail", "doc": "Always fails.",
     "inputs": [{"name": "x"}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "input:0"}]},
    {"name": "P.record", "doc": "Copies its call record into y.",
     "inputs": [{"name": "x", "dtypes": ["u8"]}, {"name": "w", "optional": true}, {"name": "z", "optional": true}],
     "outputs": [{"name": "y", "shape": "input:0", "dtype": "u8"}, {"name": "v", "shape": "broadcast", "dtype": "f64"}]},
    {"name": "P.attrs", "doc": "Copies the attributes JSON into y.",
     "inputs": [{"name": "x", "dtypes": ["u8"]}],
     "attrs": [{"name": "alpha", "kind": "float", "default": 1.5, "doc": "a float"},
               {"name": "n", "kind": "int", "default": 3},
               {"name": "flag", "kind": "bool", "default": true},
               {"name": "mode", "kind": "string", "default": "a", "enum": ["a", "b"]},
               {"name": "axes", "kind": "ints", "default": [0, 1]},
               {"name": "ws", "kind": "floats", "default": [0.5]},
               {"name": "dt", "kind": "dtype", "default": "f16"},
               {"name": "opt", "kind": "int"}],
     "outputs": [{"name": "y", "shape": "input:0", "dtype": "u8"}]},
    {"name": "P.infer_echo", "doc": "Copies its wt_infer request into y.",
     "inputs": [{"name": "x"}], "attrs": [{"name": "k", "kind": "int", "default": 3}],
     "outputs": [{"name": "y", "shape": "infer", "dtype": "u8"}]}
  ]
}`)
}

// fn gives the index of a defined function.
func (f *fixture) fn(i int) int {
	n := 0
	for _, im := range f.imports {
		if im.kind == 0 {
			n++
		}
	}
	return n + i
}

// minU leaves min(local a, local b) (unsigned) on the stack.
func minU(f *fixture, a, b []byte) []byte { return code(a, b, call(f.fn(fnMin))) }

func goodKernel(f *fixture) []byte {
	const op, rec, in, out, n, i, outRec = 0, 1, 2, 3, 4, 5, 6
	copyTo := func(src, length []byte) []byte {
		return code(lget(out), src, minU(f, length, lget(n)), call(f.fn(fnCopy)), i32c(0), opReturn)
	}
	isOp := func(k int32) []byte { return code(lget(op), i32c(k), opI32Eq) }
	return code(
		// outRec = rec + 16 + 48*n_inputs; out, n = its data_ptr, nbytes
		lget(rec), i32c(16), opI32Add, lget(rec), load32(0), i32c(48), opI32Mul, opI32Add, lset(outRec),
		lget(outRec), load32(0), lset(out),
		lget(outRec), load32(4), lset(n),
		isOp(0), opIf, blockEmpty,
		lget(rec), load32(16), lset(in),
		opBlock, blockEmpty, opLoop, blockEmpty,
		lget(i), lget(n), opI32GeU, opBrIf, 1,
		lget(out), lget(i), opI32Add,
		lget(in), lget(i), opI32Add, opF32Load, 2, 0,
		f32c(1), opF32Add, opF32Store, 2, 0,
		lget(i), i32c(4), opI32Add, lset(i),
		opBr, 0, opEnd, opEnd,
		i32c(0), opReturn, opEnd,
		isOp(1), opIf, blockEmpty, i32c(7), opReturn, opEnd,
		isOp(2), opIf, blockEmpty,
		copyTo(lget(rec), code(lget(rec), load32(0), lget(rec), load32(4), opI32Add, i32c(48), opI32Mul, i32c(16), opI32Add)),
		opEnd,
		isOp(3), opIf, blockEmpty, copyTo(code(lget(rec), load32(8)), code(lget(rec), load32(12))), opEnd,
		isOp(4), opIf, blockEmpty, copyTo(i32c(requestAt), gget(1)), opEnd,
		i32c(99),
	)
}

// bumpAlloc hands out 8-aligned blocks from global 0, growing memory; 0
// when memory cannot grow.
var bumpAlloc = code(
	gget(0), i32c(7), opI32Add, i32c(-8), opI32And, lset(1),
	lget(1), lget(0), opI32Add, lset(2),
	lget(2), lget(1), opI32LtU, opIf, blockEmpty, i32c(0), opReturn, opEnd,
	lget(2), opMemorySize, 0, i32c(16), opI32Shl, opI32GtU, opIf, blockEmpty,
	lget(2), opMemorySize, 0, i32c(16), opI32Shl, opI32Sub, i32c(65535), opI32Add, i32c(16), opI32ShrU,
	opMemoryGrow, 0, i32c(-1), opI32Eq, opIf, blockEmpty, i32c(0), opReturn, opEnd,
	opEnd,
	lget(2), gset(0), lget(1),
)

func (f *fixture) wasm() []byte {
	ret := func(p *int64, def int64) []byte {
		if p != nil {
			return i64c(*p)
		}
		return i64c(def)
	}
	kernel := goodKernel
	if f.kernel != nil {
		kernel = f.kernel
	}
	alloc := bumpAlloc
	if f.alloc != nil {
		alloc = f.alloc
	}
	funcs := []wasmFunc{
		fnABI:      {params: nil, results: []byte{tI32}, body: i32c(f.abi)},
		fnAlloc:    {params: []byte{tI32}, results: []byte{tI32}, locals: []byte{tI32, tI32}, body: alloc},
		fnFree:     {params: []byte{tI32, tI32}},
		fnManifest: {results: []byte{tI64}, body: ret(f.manifestRet, packed(manifestAt, uint32(len(f.manifest))))},
		fnKernel: {params: []byte{tI32, tI32}, results: []byte{tI32},
			locals: []byte{tI32, tI32, tI32, tI32, tI32}, body: kernel(f)},
		fnError: {results: []byte{tI64}, body: ret(f.errorRet, packed(errMsgAt, uint32(len(f.errMsg))))},
		fnInfer: {params: []byte{tI32, tI32, tI32}, results: []byte{tI64}, body: code(
			minU(f, lget(2), i32c(requestMax)), gset(1),
			i32c(requestAt), lget(1), gget(1), call(f.fn(fnCopy)),
			ret(f.inferRet, packed(answerAt, uint32(len(f.inferAnswer)))))},
		fnCopy: {params: []byte{tI32, tI32, tI32}, locals: []byte{tI32}, body: code(
			opBlock, blockEmpty, opLoop, blockEmpty,
			lget(3), lget(2), opI32GeU, opBrIf, 1,
			lget(0), lget(3), opI32Add, lget(1), lget(3), opI32Add, opI32Load8U, 0, 0, opI32Store8, 0, 0,
			lget(3), i32c(1), opI32Add, lset(3),
			opBr, 0, opEnd, opEnd)},
		fnMin: {params: []byte{tI32, tI32}, results: []byte{tI32},
			body: code(lget(0), lget(1), lget(0), lget(1), opI32LtU, opSelect)},
	}
	for i, name := range exportNames {
		if !f.omit[name] {
			funcs[i].export = name
		}
		if r, ok := f.retype[name]; ok {
			r.export = name
			funcs[i] = r
		}
	}
	m := &wasmModule{imports: f.imports, memMin: f.memMin, memMax: f.memMax, memExport: f.memExport,
		noMemory: f.noMemory, globals: []int32{heapStart, 0}, funcs: append(funcs, f.extra...), rawAppend: f.rawAppend,
		data: []wasmData{
			{errMsgAt, []byte(f.errMsg)},
			{answerAt, []byte(f.inferAnswer)},
			{manifestAt, []byte(f.manifest)},
		}}
	return m.encode()
}

// newTestHost makes a host closed at the end of the test.
func newTestHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	h, err := NewHost(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// loadGood loads a fresh good fixture plugin.
func loadGood(t testing.TB, h *Host) *Plugin {
	t.Helper()
	name := uniq("good")
	p, err := h.Load(context.Background(), name+".wasm", newFixture(name).wasm())
	require.NoError(t, err)
	return p
}

// checkAdd1 calls <plugin>.add1 through the registry and checks the values.
func checkAdd1(t testing.TB, plugin string, vals []float32) {
	t.Helper()
	x := core.FromSlice(vals, core.Shape{len(vals)})
	outs, err := core.Call(plugin+".add1", []*core.Tensor{x}, nil)
	require.NoError(t, err)
	got, err := outs[0].Float32s()
	require.NoError(t, err)
	want := make([]float32, len(vals))
	for i, v := range vals {
		want[i] = v + 1
	}
	require.Equal(t, want, got)
}

// requireUsable proves the host still works: a good plugin loads and runs.
func requireUsable(t *testing.T, h *Host) {
	t.Helper()
	p := loadGood(t, h)
	checkAdd1(t, p.Name(), []float32{1, 2.5, -4})
	require.NoError(t, p.Close())
}
