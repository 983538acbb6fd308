//go:build !amd64

package cpu

// Without amd64's kernels simdLevel stays simdNone and every elementwise
// loop is Go's; these stand in for the generated switches of
// ew_dispatch_amd64.go and are never called.

func noKernel() { panic("cpu: no vector kernels on this architecture") }

func vecBinF32(bool, ewBin, *float32, *float32, int, *float32, int, int)       { noKernel() }
func vecBinStreamF32(bool, ewBin, *float32, *float32, int, *float32, int, int) { noKernel() }
func vecUnStreamF32(bool, ewUn, *float32, *float32, int)                       { noKernel() }
func vecCmpF32(bool, ewCmp, *byte, *float32, int, *float32, int, int)          { noKernel() }
func vecUnF32(bool, ewUn, *float32, *float32, int)                             { noKernel() }
func vecInt(bool, ewIntBin, *byte, *byte, int, *byte, int, int)                { noKernel() }
func vecWhereF32(bool, *float32, *byte, *float32, int, *float32, int, int)     { noKernel() }
func vecNarrow(bool, bool, *uint16, *float32, int)                             { noKernel() }
func vecWiden(bool, bool, *float32, *uint16, int)                              { noKernel() }
func vecF32ToI32(bool, *int32, *float32, int)                                  { noKernel() }
func vecI32ToF32(bool, *float32, *int32, int)                                  { noKernel() }
func vecTrigF32(bool, bool, *float32, *float32, int) int                       { noKernel(); return 0 }
