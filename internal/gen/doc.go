// Command gen writes every file derived from the op registry: core's typed
// Go methods, docs/ops.md, docs/config.md, the conformance index and the op
// code of the Python, JavaScript and Java SDKs; and, from the C ABI's
// headers (capi/include), the SDKs' FFI declarations of every C function
// (abi_header.go, abi_bindings.go); and, from one table checked against nn's
// defaults and the library's setting names, the SDKs' optimiser classes
// (optim.go); and, from the domain methods registered with abi's wt_call,
// docs/calls.md (docs.go); and the CPU backend's portable GEMM micro-kernel,
// its unrolled k steps written from one (gemm_micro.go). `make generate` runs it
// (through core's go:generate line); `make generate-check`, in CI, runs it
// with -check, which writes nothing and fails naming each stale file.
//
// One program instead of a generator per SDK, so that adding an op is one
// OpDef and one command, and the SDKs cannot drift apart. Generated files
// start with a "Code generated ... DO NOT EDIT." line, are grouped by op
// category, and are exempt from the 850-line rule (make size-check).
package main
