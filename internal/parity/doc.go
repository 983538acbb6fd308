// Package parity measures how much of the Python SDK's API the other SDKs
// cover and writes the report, docs/parity.md (issue 22, item 5).
//
// The Python package is the reference: its public names are read from its
// sources by category (ops, core, compile, plugins, nn, optim, data, onnx,
// cuda). The JavaScript and Java SDKs' public names are read from theirs
// (TypeScript exports; Java public classes and methods). A Python name is
// covered when an SDK has a name that spells the same once case and
// underscores are ignored (manual_seed, manualSeed), which is how the SDKs
// translate names into their languages' conventions. The array API
// standard's namespace (webtensor/_array_api*.py) is a Python standard and
// not counted. The test in this package fails when docs/parity.md is not
// what the sources give; `go test ./internal/parity -update` rewrites it.
package parity
