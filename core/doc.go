// Package core holds what every backend and every SDK shares: Tensor, DType,
// Shape and Device, the op registry (OpDef), dispatch to backends, the seeded
// Philox RNG and reverse-mode autograd.
//
// The registry is the single source of truth: an op is declared once as an
// OpDef (inputs, typed attributes, shape and dtype inference, backward rule,
// doc line, sample cases) and every other artefact — the manifest, the SDK
// methods, the backend test suite, the reference vectors — is derived from it.
//
// Errors never panic through this API. Tensor-returning methods carry a sticky
// error instead (like bufio.Scanner): an op on a tensor that holds an error
// returns a tensor holding the same error, and Err reports it, so model code
// reads as a chain and checks once.
package core

// Everything derived from the registry: methods_gen.go, docs/ops.md, the
// conformance index and the SDKs' op code (internal/gen, `make generate`).
//go:generate go run ../internal/gen
