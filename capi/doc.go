// Command capi is the C ABI of webtensor, built with
// `go build -buildmode=c-shared -o libwebtensor.so ./capi` (`make capi`).
// include/webtensor.h documents every function; include/dlpack.h declares
// the DLPack structs.
//
// Rules this package keeps, because every SDK depends on them: tensors cross
// the boundary as integer handles into a table, never as Go pointers; every
// exported function recovers panics and returns a status, with a per-thread
// message; CPU tensors are allocated in C memory (see alloc.go) so DLPack can
// share them without copying; nothing the caller passes is trusted.
package main

func main() {}
