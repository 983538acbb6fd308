//go:build !unix

package cpu

// addressSpaceLimit: no address-space rlimit on this platform (Windows,
// WebAssembly), where the other limits and 1 TiB apply.
func addressSpaceLimit() int64 { return 0 }
