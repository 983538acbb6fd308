// Command auto is webtensor's default policy for the auto-agents (package
// auto): a WebAssembly module that answers the kernel agent ("kernel"),
// the data agent ("data") and the quantisation agent ("quant") with proposals, JSON in and JSON out
// (see plugins-wasm/ABI.md, "Policies"). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o policy-auto.wasm .
//
// (`make plugins` does, into build/plugins/). The agents measure every
// proposal A/B on the user's workload and keep only winners, so a rule
// here that is wrong for some machine costs a measurement, not a slowdown.
package main
