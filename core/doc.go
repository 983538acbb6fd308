// Package core holds what every backend and every SDK shares: Tensor, DType,
// Shape and Device, the op registry (OpDef), dispatch to backends, the seeded
// Philox RNG and reverse-mode autograd.
//
// The registry is the single source of truth: an op is declared once as an
// OpDef (inputs, typed attributes, shape and dtype inference, backward rule,
// doc line, sample cases) and every other artefact — the manifest, the SDK
// methods, the backend test suite, the reference vectors — is derived from it.
// An elementwise op can carry its arithmetic (Pointwise), from which every
// backend derives its kernel (RegisterKernelDeriver), and an op made of
// other ops its composition (Compose), which every backend runs as is: such
// ops are added without writing a kernel (docs/adding-an-op.md). Any other
// op whose output elements are independent may carry its GPU kernel as one
// body (GPUBody, an ElementBody), and one whose elements depend on a row of
// its input (a norm, a softmax) as one row body (an ElementBody with Rows),
// from which the GPU backends derive theirs: only its CPU kernel is written.
//
// Three packages share the work, by reader:
//   - core (this package) is the user's API: tensors and their ops (Call,
//     the generated methods, Full, FromSlice, ...), devices and dtypes,
//     autograd and no-grad scopes, ManualSeed, the manifest (Ops,
//     BuildManifest) and fallback counts. It is also the contract a backend
//     or plugin implements and registers with: Backend, Storage, Kernel,
//     KernelCall, Capabilities, RegisterBackend, RegisterKernel,
//     DeclareHostWork, OpDef and Register, and the sample inputs an OpDef
//     declares (Gen, Sample, MakeLayout).
//   - core/types declares the value types: DType (with its constants,
//     ParseDType and PromoteTypes), Shape and Attrs. Core repeats every one
//     of its names (type aliases, constants, thin functions), so model code
//     never imports it; it exists so the packages below core can be typed
//     on the same values. It imports nothing of webtensor.
//   - core/oprules is the first half of the backend and plugin author's
//     kit: the rules an OpDef's shape inference shares with its kernels (the
//     Conv2dGeom, Pool2dGeom and InterpolateGeom families, AttentionShapes,
//     PlanMatmul, ParseEinsum, SoftmaxAxis, ReducedAxes, ArgReduceAxis,
//     ScanAxis, ArangeInts, ParseQuantParams, ClassLayout, ReshapeStrides,
//     NormAxis, ...). Core calls them, so they sit below it (imports only
//     core/types); core's NormAxis, NormAxes, BroadcastShapes, ReduceShape
//     and ContiguousStrides are the same functions, kept for model code.
//   - core/kernelkit is the other half: the checks and attribute defaults
//     only kernels apply, PairCache and GradTolScale. It imports core.
//   - core/numerics holds the arithmetic core and every backend must compute
//     bit for bit alike: the Philox4x32-10 stream (and SampleSeed, the key
//     of a sample input), f16/bf16 conversion and the element codec
//     (GetF64/PutF64/GetI64/PutI64, FloatToInt, IntRange). It imports only
//     core/types; core uses it, unexported.
//
// Errors never panic through this API. Tensor-returning methods carry a sticky
// error instead (like bufio.Scanner): an op on a tensor that holds an error
// returns a tensor holding the same error, and Err reports it, so model code
// reads as a chain and checks once.
package core

// Everything derived from the registry: methods_gen.go, docs/ops.md, the
// conformance index and the SDKs' op code (internal/gen, `make generate`).
//go:generate go run ../internal/gen
