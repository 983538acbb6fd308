// Package cuda is the optional backend for NVIDIA GPUs: device kind
// "cuda" ("cuda:N"), registered with core like the others, with no build
// or run-time requirement where CUDA is absent.
//
// Why it loads everything at run time: one build of the library, the
// wheel, the npm package and the jar must run on machines without CUDA.
// The driver (libcuda.so.1), NVRTC and cuBLAS are opened with dlopen
// (loader.c, driver.go, libs.go) when a cuda device is first asked for;
// where one is missing, the backend does not open and its error says which
// library was looked for where (doctor prints it). Builds without Linux
// and cgo get stub.go, which says the same.
//
// Kernels come from the same per-op description the WebGPU backend uses:
// elementwise ops are backends/lower's expressions translated to CUDA C
// (translate.go), the others are CUDA C written by the kernels_<category>.go
// files on the shared headers in cu/; NVRTC compiles each for
// the device's architecture on first use and the result is cached on disk
// keyed by architecture and source hash (diskcache.go). Matrix products
// and convolutions go through cuBLAS, with TF32 off unless asked for
// (WEBTENSOR_CUDA_TF32 / cuda.SetAllowTF32), so f32 means f32.
//
// Execution is stream-ordered: one non-blocking stream per device, a
// caching allocator (alloc.go: reuse, statistics, EmptyCache), launches
// that return at once, and synchronisation only when the host reads.
// Faults (out of memory, illegal address, launch failure) come back as
// errors naming the op, and the backend stays usable after an OOM.
//
// Without a GPU, the tests still compile every kernel with NVRTC (when its
// pip wheel is present) and run the suite on an emulated device
// (device_emu.go: each kernel's CUDA source built by the host C++ compiler
// between cu/emu_head.h and cu/emu_tail.h); the real device's columns run
// only where a GPU is.
package cuda
