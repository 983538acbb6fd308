package plugins

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// Benchmarks for docs/perf.md: what loading costs once the compilation cache
// is warm, and what a plugin op costs next to the built-in "add" with a
// scalar, on a large tensor (kernel speed) and a small one (call overhead).

// BenchmarkLoadWarmCache is a whole load on a new host: runtime, compile
// (a cache hit), instantiate, manifest, registry binding.
func BenchmarkLoadWarmCache(b *testing.B) {
	name := uniq("benchload")
	wasm := newFixture(name).wasm()
	benchLoad(b, wasm)
}

// BenchmarkLoadGoExampleWarmCache loads the Go SDK example (a Go wasip1
// reactor, megabytes of code) the same way, when `make plugins` built it.
func BenchmarkLoadGoExampleWarmCache(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "build", "plugins", "goswish.wasm"))
	if err != nil {
		b.Skip("build/plugins/goswish.wasm is missing: run `make plugins`")
	}
	benchLoad(b, wasm)
}

func benchLoad(b *testing.B, wasm []byte) {
	ctx := context.Background()
	warm := func() {
		h, err := NewHost(ctx, NewConfig())
		if err != nil {
			b.Fatal(err)
		}
		p, err := h.Load(ctx, "bench.wasm", wasm)
		if err != nil {
			b.Fatal(err)
		}
		_ = p.Close()
		_ = h.Close(ctx)
	}
	warm() // compiles into the shared cache, registers the ops
	for b.Loop() {
		warm()
	}
}

// BenchmarkInstantiate is re-instantiation from the compiled module, what a
// call after a trap or timeout pays.
func BenchmarkInstantiate(b *testing.B) {
	h := newTestHost(b, NewConfig())
	p := loadGood(b, h)
	ctx := context.Background()
	for b.Loop() {
		in, err := h.instantiate(ctx, p.compiled)
		if err != nil {
			b.Fatal(err)
		}
		in.close()
	}
}

// benchInput is a benchmark's input, n float32s, and b counts their bytes.
func benchInput(b *testing.B, n int) *core.Tensor {
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	b.SetBytes(int64(4 * n))
	return core.FromSlice(vals, core.Shape{n})
}

// pluginAdd1 runs the good fixture's add1 on a new host of cfg.
func pluginAdd1(b *testing.B, cfg Config) func(x *core.Tensor) error {
	op := loadGood(b, newTestHost(b, cfg)).Name() + ".add1"
	return func(x *core.Tensor) error { return callReleasing(op, x) }
}

// builtinAddScalar runs the built-in add with the scalar 1, add1's peer.
func builtinAddScalar() func(x *core.Tensor) error {
	one := core.Scalar(1, core.F32)
	return func(x *core.Tensor) error { return callReleasing("add", x, one) }
}

// callReleasing calls op and releases its output at once, so that the
// benchmarks measure calls, not the collector.
func callReleasing(op string, in ...*core.Tensor) error {
	outs, err := core.Call(op, in, nil)
	if err == nil {
		outs[0].Release()
	}
	return err
}

func benchOp(b *testing.B, n int, run func(x *core.Tensor) error) {
	x := benchInput(b, n)
	for b.Loop() {
		if err := run(x); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPluginAdd1(b *testing.B, cfg Config, n int) { benchOp(b, n, pluginAdd1(b, cfg)) }
func benchBuiltinAddScalar(b *testing.B, n int)       { benchOp(b, n, builtinAddScalar()) }

func BenchmarkPluginAdd1_1M(b *testing.B)       { benchPluginAdd1(b, NewConfig(), 1<<20) }
func BenchmarkBuiltinAddScalar_1M(b *testing.B) { benchBuiltinAddScalar(b, 1<<20) }
func BenchmarkPluginAdd1_16(b *testing.B)       { benchPluginAdd1(b, NewConfig(), 16) }
func BenchmarkBuiltinAddScalar_16(b *testing.B) { benchBuiltinAddScalar(b, 16) }

// The plugin op without a deadline (WithNoDeadline): no termination check
// in the kernel's loop, no timer per call.
func BenchmarkPluginAdd1NoDeadline_1M(b *testing.B) {
	benchPluginAdd1(b, NewConfig().WithNoDeadline(), 1<<20)
}

func BenchmarkPluginAdd1NoDeadline_16(b *testing.B) {
	benchPluginAdd1(b, NewConfig().WithNoDeadline(), 16)
}

// Calls from GOMAXPROCS goroutines at once (b.RunParallel): with the pool
// each runs on an instance of its own; WithMaxInstances(1) is a host with one
// instance per plugin, where they queue. ns/op is wall time per call, all
// goroutines together.
func benchParallel(b *testing.B, n int, run func(x *core.Tensor) error) {
	x := benchInput(b, n)
	if err := run(x); err != nil { // the first instance, and a warm scratch block
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := run(x); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchPluginAdd1Parallel(b *testing.B, cfg Config, n int) {
	benchParallel(b, n, pluginAdd1(b, cfg))
}
func benchBuiltinAddScalarParallel(b *testing.B, n int) { benchParallel(b, n, builtinAddScalar()) }

func BenchmarkPluginAdd1Parallel_16(b *testing.B) { benchPluginAdd1Parallel(b, NewConfig(), 16) }
func BenchmarkPluginAdd1Parallel1Instance_16(b *testing.B) {
	benchPluginAdd1Parallel(b, NewConfig().WithMaxInstances(1), 16)
}
func BenchmarkBuiltinAddScalarParallel_16(b *testing.B) { benchBuiltinAddScalarParallel(b, 16) }

func BenchmarkPluginAdd1Parallel_64K(b *testing.B) { benchPluginAdd1Parallel(b, NewConfig(), 64<<10) }
func BenchmarkPluginAdd1Parallel1Instance_64K(b *testing.B) {
	benchPluginAdd1Parallel(b, NewConfig().WithMaxInstances(1), 64<<10)
}
func BenchmarkBuiltinAddScalarParallel_64K(b *testing.B) { benchBuiltinAddScalarParallel(b, 64<<10) }
