// Package scaffold writes a new elementwise op from one formula: `webtensor
// op new NAME --formula EXPR` parses EXPR (Go syntax over x, and y for a
// two-input op, with + - * /, numbers and a fixed set of functions),
// differentiates it symbolically, and emits the OpDef (its float64
// function, its GPU expression, its backward rule written with registry
// ops), the PyTorch reference and a training test - everything the op
// needs, since a Pointwise op derives its kernels on every backend.
package scaffold
