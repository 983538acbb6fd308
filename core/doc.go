// Package core holds what every backend and every SDK shares: Tensor, DType,
// Shape and Device, the op registry (OpDef), dispatch to backends, the seeded
// Philox RNG and reverse-mode autograd.
//
// The registry is the single source of truth: an op is declared once as an
// OpDef (inputs, typed attributes, shape and dtype inference, backward rule,
// doc line, sample cases) and every other artefact — the manifest, the SDK
// methods, the backend test suite, the reference vectors — is derived from it.
//
// Three packages share the work, by reader:
//   - core (this package) is the user's API: tensors and their ops (Call,
//     the generated methods, Full, FromSlice, ...), devices and dtypes,
//     autograd and no-grad scopes, ManualSeed, the manifest (Ops,
//     BuildManifest) and fallback counts. It is also the contract a backend
//     or plugin implements and registers with: Backend, Storage, Kernel,
//     KernelCall, Capabilities, RegisterBackend, RegisterKernel,
//     DeclareHostWork, OpDef and Register, and the op rules its kernels
//     share with the OpDef's shape inference (the Conv2dGeom family,
//     SoftmaxAxis, PlanMatmul, GetF64/PutF64, ...), which stay here because
//     core applies them itself.
//   - core/kernelkit is the backend and plugin author's kit: the checks and
//     attribute defaults only kernels apply, and PairCache.
//   - core/numerics holds the arithmetic core and every backend must compute
//     bit for bit alike: the Philox4x32-10 stream and f16/bf16 conversion.
//     It imports nothing of webtensor; core uses it, unexported.
//
// Errors never panic through this API. Tensor-returning methods carry a sticky
// error instead (like bufio.Scanner): an op on a tensor that holds an error
// returns a tensor holding the same error, and Err reports it, so model code
// reads as a chain and checks once.
package core

// Everything derived from the registry: methods_gen.go, docs/ops.md, the
// conformance index and the SDKs' op code (internal/gen, `make generate`).
//go:generate go run ../internal/gen
