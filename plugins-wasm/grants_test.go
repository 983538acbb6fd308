package plugins

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// What a plugin sees of the outside world through WASI: nothing real unless
// the Config grants it.

// wasiFixture imports one WASI function (function index 0) and runs body
// as wt_kernel. For op add1 (one input) the output record is at call+64.
func wasiFixture(name string, body []byte, params ...byte) *fixture {
	f := newFixture(uniq(name))
	f.imports = []wasmImportSpec{{module: wasiModule, name: name, params: params, results: []byte{tI32}}}
	f.kernel = func(*fixture) []byte { return body }
	return f
}

// outBytes runs <plugin>.add1 on n f32 zeros and returns the output bytes.
func outBytes(t *testing.T, h *Host, f *fixture, n int) []byte {
	t.Helper()
	p, err := h.Load(context.Background(), "w.wasm", f.wasm())
	require.NoError(t, err)
	defer p.Close()
	y := core.Call1(p.Name()+".add1", nil, core.FromSlice(make([]float32, n), core.Shape{n}))
	raw, err := y.Bytes()
	require.NoError(t, err)
	return raw
}

func TestStdoutAndStderr(t *testing.T) {
	const msg = "hello from the plugin"
	write := func(fd int32) *fixture {
		// One iovec over the message in the data segment, then the good kernel.
		body := code(
			i32c(iovecAt), i32c(errMsgAt), opI32Store, 2, 0,
			i32c(iovecAt+4), i32c(int32(len(msg))), opI32Store, 2, 0,
			i32c(fd), i32c(iovecAt), i32c(1), i32c(iovecAt+8), call(0), opDrop)
		f := wasiFixture("fd_write", nil, tI32, tI32, tI32, tI32)
		f.errMsg = msg
		f.kernel = func(f *fixture) []byte { return append(body, goodKernel(f)...) }
		return f
	}
	// Not granted: the output goes nowhere and the call still works.
	h := newTestHost(t, NewConfig())
	outBytes(t, h, write(1), 2)

	var stdout, stderr bytes.Buffer
	h = newTestHost(t, NewConfig().WithStdout(&stdout).WithStderr(&stderr))
	outBytes(t, h, write(1), 2)
	outBytes(t, h, write(2), 2)
	assert.Equal(t, msg, stdout.String())
	assert.Equal(t, msg, stderr.String())
}

func TestRandomness(t *testing.T) {
	fill := code(lget(1), load32(64), lget(1), load32(68), call(0), opDrop, i32c(0))
	draw := func(cfg Config) []byte {
		return outBytes(t, newTestHost(t, cfg), wasiFixture("random_get", fill, tI32, tI32), 8)
	}
	a, b := draw(NewConfig()), draw(NewConfig())
	assert.Equal(t, a, b, "deterministic unless granted")
	assert.NotEqual(t, make([]byte, 32), a)
	assert.Equal(t, bytes.Repeat([]byte{0xab}, 32), draw(NewConfig().WithRandom(constReader(0xab))))
}

type constReader byte

func (c constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

func TestClock(t *testing.T) {
	now := code(i32c(0), i64c(1), lget(1), load32(64), call(0), opDrop, i32c(0))
	read := func(cfg Config) time.Time {
		raw := outBytes(t, newTestHost(t, cfg), wasiFixture("clock_time_get", now, tI32, tI64, tI32), 2)
		return time.Unix(0, int64(binary.LittleEndian.Uint64(raw)))
	}
	assert.True(t, read(NewConfig()).Before(time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)), "a fake clock unless granted")
	assert.WithinDuration(t, time.Now(), read(NewConfig().WithClock()), time.Minute)
}
