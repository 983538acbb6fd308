// Command capi is the C ABI of webtensor, built with
// `go build -buildmode=c-shared -o libwebtensor.so ./capi` (`make capi`).
// include/webtensor.h documents every function; include/dlpack.h declares
// the DLPack structs.
//
// It is the C face of package abi, which holds the handle table, the
// statuses and messages, the attribute decoding and the calls (the browser
// bridge, sdk/js/wasm, is the other face): each export here checks what
// only C can get wrong (NULL pointers, counts, buffer capacities), turns C
// arguments into Go values without copying where it can, calls abi, and
// writes the result into the caller's memory. What exists only in C lives
// here too: the per-thread last error and no-grad depth, CPU tensors in C
// memory (alloc.go) so DLPack can share them without copying, DLPack itself
// and borrowed host memory.
//
// Rules this package keeps, because every SDK depends on them: tensors cross
// the boundary as integer handles, never as Go pointers; every exported
// function recovers panics and returns a status, with a per-thread message;
// nothing the caller passes is trusted.
package main

func main() {}
