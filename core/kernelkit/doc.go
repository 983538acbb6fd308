// Package kernelkit is for backend and plugin authors, not model code: the
// helpers a kernel uses to apply an op's rules exactly as every other
// backend does. Model code needs only core.
//
// What is where:
//   - kernelkit: rules only kernels apply, with the words of their errors
//     (CheckSegmentIDs, CheckCSR, CheckOneHot, OneHotClasses), attribute
//     defaults only kernels read (AttentionScale, FFTScale,
//     AdaptiveRange), the values creation kernels fill with (RegisterFills,
//     LinspaceBounds), PairCache (a value derived from two tensors, kept for
//     their lifetime) and GradTolScale for test suites.
//   - core/oprules: the rules an op's shape inference shares with its
//     kernels (Conv2dGeom, SoftmaxAxis, PlanMatmul, ParseEinsum,
//     ReducedAxes, ...). Core applies those itself, so they live below core
//     rather than here (this package imports core).
//   - core/numerics: Philox4x32-10, the f16/bf16 conversions and the
//     element codec (GetF64/PutF64/GetI64/PutI64, FloatToInt, IntRange),
//     for the same reason.
//   - core/types: DType, Shape and Attrs, which core aliases; kernels name
//     them through core.
//   - core: what a backend implements or registers with (Backend, Storage,
//     Kernel, KernelCall, RegisterBackend, RegisterKernel, DeclareHostWork,
//     Empty, NewView, WrapStorage).
package kernelkit
