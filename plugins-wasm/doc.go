// Package plugins is the WebAssembly plugin host: it loads .wasm modules
// that implement plugin ABI v1 (ABI.md) into a wazero sandbox and registers
// their ops in core's registry with CPU kernels that run inside the module,
// so every SDK can call a plugin's op like a built-in one.
//
// A module gets no files, environment, arguments or real clock unless the
// Config grants them, a memory cap per instance and a deadline per call;
// loading is bounded by a compile deadline and a cap on the control blocks
// of one function (compile.go, codecheck.go).
// Each plugin keeps a pool of instances of its compiled module, so calls from
// several goroutines run at once, each on an instance of its own, up to
// WithMaxInstances (GOMAXPROCS by default); further calls wait for one. A
// trap, timeout or lie about its memory becomes an error naming the plugin,
// the op and the cause; the instance is then closed, never to serve another
// call, a fresh one is instantiated when a call needs it, and the host keeps
// running.
//
//	h, err := plugins.NewHost(ctx, plugins.NewConfig().WithDeadline(time.Second))
//	p, err := h.LoadFile(ctx, "build/plugins/example.wasm")
//	y, err := core.Call("example.swish", []*core.Tensor{x}, core.Attrs{"beta": 2.0})
package plugins
