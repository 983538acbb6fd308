package plugins

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/webtensor/webtensor/core"
)

// nestedBody is n control instructions op (block, loop) nested in each
// other, each closed by its end.
func nestedBody(op byte, n int) []byte {
	return append(bytes.Repeat([]byte{op, blockEmpty}, n), bytes.Repeat([]byte{opEnd}, n)...)
}

// nestedBlocksFixture is the good fixture plus an unexported function of n
// nested op blocks.
func nestedBlocksFixture(plugin string, op byte, n int) *fixture {
	f := newFixture(plugin)
	f.extra = []wasmFunc{{body: nestedBody(op, n)}}
	return f
}

func TestLoadRefusesFunctionsWithTooManyBlocks(t *testing.T) {
	h := hostileHost(t)
	cases := map[string][]byte{
		// The reproducer: 1M nested blocks in 3 MB compiled for minutes.
		"1M nested blocks": nestedBody(opBlock, 1_000_000),
		// Not only depth: wazero's time grows with the square of the count.
		"300k blocks in a row": bytes.Repeat([]byte{opBlock, blockEmpty, opEnd}, 300_000),
		"nested loops and ifs": code(nestedBody(opLoop, 6000), bytes.Repeat(code(i32c(1), opIf, blockEmpty, opEnd), 6000)),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(uniq("blocks"))
			f.extra = []wasmFunc{{body: body}}
			_, err := h.Load(context.Background(), "blocks.wasm", f.wasm())
			require.Error(t, err)
			t.Log(err)
			assert.ErrorContains(t, err, "plugin blocks.wasm: cannot compile: function 9 of 10 has more than 10000 control blocks")
			assert.ErrorContains(t, err, "plugins.Config.WithMaxFunctionBlocks or WEBTENSOR_PLUGIN_MAX_BLOCKS")
			_, registered := core.LookupOp(f.plugin + ".add1")
			assert.False(t, registered)
			requireUsable(t, h)
		})
	}
}

func TestMaxFunctionBlocksIsConfigurable(t *testing.T) {
	strict := newTestHost(t, NewConfig().WithMaxFunctionBlocks(1000))
	f := nestedBlocksFixture(uniq("blocks"), opLoop, 1001)
	_, err := strict.Load(context.Background(), "loops.wasm", f.wasm())
	assert.ErrorContains(t, err, "has more than 1000 control blocks")

	at := nestedBlocksFixture(uniq("blocks"), opLoop, 1000)
	p, err := strict.Load(context.Background(), "loops.wasm", at.wasm())
	require.NoError(t, err, "a function at the limit loads")
	checkAdd1(t, p.Name(), []float32{1})

	t.Setenv(envMaxBlocks, "2000")
	fromEnv := newTestHost(t, NewConfig())
	p, err = fromEnv.Load(context.Background(), "loops.wasm", nestedBlocksFixture(uniq("blocks"), opLoop, 1500).wasm())
	require.NoError(t, err, "%s raises the limit", envMaxBlocks)
	checkAdd1(t, p.Name(), []float32{2})
	_, err = fromEnv.Load(context.Background(), "loops.wasm", nestedBlocksFixture(uniq("blocks"), opLoop, 2001).wasm())
	assert.ErrorContains(t, err, "has more than 2000 control blocks")

	for v, want := range map[string]string{"lots": `WEBTENSOR_PLUGIN_MAX_BLOCKS="lots" is not a positive integer`,
		"0": `WEBTENSOR_PLUGIN_MAX_BLOCKS="0" is not a positive integer`} {
		t.Setenv(envMaxBlocks, v)
		_, err = NewHost(context.Background(), NewConfig())
		assert.ErrorContains(t, err, want)
	}
	t.Setenv(envMaxBlocks, "")
	t.Setenv(envCompileDeadline, "soon")
	_, err = NewHost(context.Background(), NewConfig())
	assert.ErrorContains(t, err, `WEBTENSOR_PLUGIN_COMPILE_DEADLINE="soon" is not a positive duration`)
	_, err = NewHost(context.Background(), NewConfig().WithCompileDeadline(time.Second))
	assert.ErrorContains(t, err, "soon", "an environment error is not hidden by a With call")

	t.Setenv(envCompileDeadline, "")
	_, err = NewHost(context.Background(), NewConfig().WithMaxFunctionBlocks(0))
	assert.ErrorContains(t, err, "max function blocks 0 is not positive")
	_, err = NewHost(context.Background(), NewConfig().WithCompileDeadline(-time.Second))
	assert.ErrorContains(t, err, "compile deadline -1s is not positive")
}

func TestCompileDeadline(t *testing.T) {
	// Each function stays under the block limit, but together they would
	// compile for about half a minute (3000 nested loops take about 0.15 s
	// each on 2 cores): the deadline stops wazero between functions.
	f := newFixture(uniq("slow"))
	for range 200 {
		f.extra = append(f.extra, wasmFunc{body: nestedBody(opLoop, 3000)})
	}
	wasm := f.wasm()
	h := newTestHost(t, NewConfig().WithCompileDeadline(200*time.Millisecond))
	_, err := h.Load(context.Background(), "slow.wasm", wasm)
	require.Error(t, err)
	t.Log(err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "plugin slow.wasm: cannot compile: context deadline exceeded: "+
		"compiling took longer than the 200ms compile deadline; raise it with plugins.Config.WithCompileDeadline "+
		"or WEBTENSOR_PLUGIN_COMPILE_DEADLINE")

	// The caller's own cancellation is reported as such.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.Load(ctx, "slow.wasm", wasm)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "cannot compile: stopped: context canceled")

	// A refused compile leaves nothing in the cache that stops a good load.
	requireUsable(t, h)
}

func TestCompilationCacheStillServesLoads(t *testing.T) {
	// The compilation cache of a directory, shared by the hosts that use it,
	// serves a module compiled by one host to another: the compile deadline
	// does not apply to a cache hit, so a deadline far below the compile
	// time still loads the module.
	dir := filepath.Join(t.TempDir(), "cache")
	f := nestedBlocksFixture(uniq("cached"), opLoop, 3000)
	wasm := f.wasm()
	h := newTestHost(t, NewConfig().WithDiskCache(dir))
	p, err := h.Load(context.Background(), "cached.wasm", wasm)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)

	h2 := newTestHost(t, NewConfig().WithDiskCache(dir).WithCompileDeadline(time.Nanosecond))
	p, err = h2.Load(context.Background(), "cached.wasm", wasm)
	require.NoError(t, err, "a cache hit compiles nothing")
	checkAdd1(t, p.Name(), []float32{3})
}

// TestCodeCheckReadsImmediates checks that the pre-pass skips every kind of
// immediate: the body below is full of bytes 0x02 (block) and 0x0b (end)
// inside constants, lane indices, memargs and label lists, and wazero
// accepts it, so the encodings are real. A pre-pass that misread one would
// count a block that is not there or lose track of the ends.
func TestCodeCheckReadsImmediates(t *testing.T) {
	f64 := make([]byte, 8)
	binary.LittleEndian.PutUint64(f64, math.Float64bits(math.Float64frombits(0x020b020b020b020b)))
	lanes := bytes.Repeat([]byte{0x02, 0x0b}, 8)
	body := code(
		opBlock, blockEmpty, // 1
		i32c(0x0b), opDrop, i64c(0x02), opDrop, i64c(-0x020b020b020b), opDrop,
		f32c(math.Float32frombits(0x020b020b)), opDrop, 0x44, f64, opDrop,
		i32c(0), opI32Load, 2, uleb(0x0b), opDrop, i32c(0), opI32Load, 2, uleb(0x20b), opDrop, // memargs
		i32c(0), i32c(0), i32c(2), opMemoryGrow, 0, 0x1c, 1, tI32, opDrop, // select with a type
		0xfd, uleb(12), lanes, // v128.const
		0xfd, uleb(12), lanes, 0xfd, uleb(13), lanes, // i8x16.shuffle
		0xfd, uleb(21), 0x0b, opDrop, // i8x16.extract_lane_s 11
		i32c(0), i32c(0), i32c(11), 0xfc, uleb(11), 0, // memory.fill
		i32c(0), i32c(0), i32c(2), 0xfc, uleb(10), 0, 0, // memory.copy
		f32c(2), 0xfc, uleb(0), opDrop, // i32.trunc_sat_f32_s
		opLoop, blockEmpty, // 2
		i32c(1), 0x0e, uleb(3), 0, 1, 0, 1, // br_table over 0, 1, 0, default 1
		opEnd,
		opEnd,
	)
	m := &wasmModule{memMin: 1, memMax: -1, memExport: "memory", funcs: []wasmFunc{{export: "f", body: body}}}
	wasm := m.encode()
	rt := wazero.NewRuntime(context.Background())
	defer func() { _ = rt.Close(context.Background()) }()
	_, err := rt.CompileModule(context.Background(), wasm)
	require.NoError(t, err, "the test module must be valid WebAssembly")

	st, err := checkCode(wasm, 2)
	require.NoError(t, err)
	assert.Equal(t, codeStats{functions: 1, maxBlocks: 2, maxDepth: 2}, st)
	_, err = checkCode(wasm, 1)
	assert.ErrorContains(t, err, "function 0 of 1 has more than 1 control blocks")
}

// TestCodeCheckOnMalformedCode: what the pre-pass cannot read goes to
// wazero, whose decoder refuses it before compiling anything.
func TestCodeCheckOnMalformedCode(t *testing.T) {
	for name, body := range map[string][]byte{
		"unknown opcode":     {0xff},
		"end without block":  {opEnd, opEnd},
		"unclosed block":     {opBlock, blockEmpty},
		"truncated constant": {0x44, 1, 2},
	} {
		m := &wasmModule{memMin: 1, memMax: -1, memExport: "memory", funcs: []wasmFunc{{body: body}}}
		_, err := checkCode(m.encode(), 10)
		assert.ErrorIs(t, err, errCodeMalformed, name)
	}
	h := hostileHost(t)
	f := newFixture(uniq("bad"))
	f.extra = []wasmFunc{{body: []byte{0xff}}}
	_, err := h.Load(context.Background(), "bad.wasm", f.wasm())
	assert.ErrorContains(t, err, "plugin bad.wasm: cannot compile: invalid function[9]")
}
