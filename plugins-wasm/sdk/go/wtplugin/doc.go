// Package wtplugin writes webtensor plugins in Go: ops whose CPU kernels run
// inside the host's WebAssembly sandbox (the contract is plugins-wasm/ABI.md).
//
// A plugin is a main package built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o my.wasm .
//
// that names itself with Plugin and registers its ops with Register from an
// init function; main stays empty. This package supplies every export the
// ABI asks for (wt_alloc, wt_manifest, wt_kernel, ...), decodes the host's
// call record into a Call whose tensors are typed views straight over the
// buffers in linear memory (no copies), and turns kernel errors and panics
// into the message the host reports.
//
// Outside wasip1 the same package compiles natively so kernels can be unit
// tested with go test: Run executes a registered op the way the host would,
// allocating outputs by the manifest's shape rules.
package wtplugin
