package cpu

// The bitwise ops (core/ops_binary_bitwise.go) on the general elementwise
// path's exact int64 values: every integer dtype and bool widen to int64
// without loss, the op runs there, and the write wraps to the output's
// width, which is the dtype's own arithmetic for and, or, xor and shifts.
// Counts outside [0, 64) reach Go's shifts as huge unsigned counts, which
// give 0 (left) and the sign fill (right); counts in [bits, 64) of a
// narrower dtype do the same once the write truncates, as in PyTorch.
// A u64 shifts right logically (its u); its other ops are the int64 bits.

func init() {
	for name, i := range map[string]func(a, b int64) int64{
		"bitwise_and":         func(a, b int64) int64 { return a & b },
		"bitwise_or":          func(a, b int64) int64 { return a | b },
		"bitwise_xor":         func(a, b int64) int64 { return a ^ b },
		"bitwise_left_shift":  func(a, b int64) int64 { return a << uint64(b) },
		"bitwise_right_shift": func(a, b int64) int64 { return a >> uint64(b) },
	} {
		// The inputs' dtypes are integer or bool (the OpDef refuses floats),
		// so f only completes binaryFns; it applies i to the integral values.
		f := func(a, b float64) float64 { return float64(i(int64(a), int64(b))) }
		var u func(a, b uint64) uint64
		if name == "bitwise_right_shift" {
			u = func(a, b uint64) uint64 { return a >> b }
		}
		register(name, binaryKernel(binaryFns{f: f, i: i, u: u}))
	}
}
