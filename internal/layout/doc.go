// Package layout holds no code, only the test of the repository's naming
// rule: an op lives under its category's name everywhere. Its OpDef is
// registered from core/ops_<category>*.go, its kernels from
// backends/<kind>/kernels_<category>*.go, its reference in
// conformance/gen/refs/<category>.py, and a WGSL file is named for the
// category whose kernels it holds (or is one of the shared templates). The
// test reads where each op and kernel was registered from core
// (core.RegisteredIn) and the references' names from the Python files.
package layout
