// Package kernelkit is for backend and plugin authors, not model code: the
// helpers a kernel uses to apply an op's rules exactly as every other
// backend does. Model code needs only core.
//
// What is where:
//   - kernelkit: rules only kernels apply, with the words of their errors
//     (CheckSegmentIDs, CheckCSR, CheckOneHot, OneHotClasses), attribute
//     defaults only kernels read (AttentionScale, RMSNormEps, FFTScale,
//     AdaptiveRange), the values creation kernels fill with (RegisterFills,
//     LinspaceBounds), PairCache (a value derived from two tensors, kept for
//     their lifetime) and GradTolScale for test suites.
//   - core/numerics: Philox4x32-10 and the f16/bf16 conversions, which core
//     uses itself and so cannot live here (this package imports core).
//   - core: what a backend implements or registers with (Backend, Storage,
//     Kernel, KernelCall, RegisterBackend, RegisterKernel, DeclareHostWork,
//     Empty, NewView, WrapStorage) and the rules an op's shape inference
//     shares with its kernels (Conv2dGeom, SoftmaxAxis, PlanMatmul,
//     GetF64/PutF64, ...): core applies those itself, so they stay beside
//     the OpDef that uses them.
package kernelkit
