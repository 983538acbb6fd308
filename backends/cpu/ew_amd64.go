package cpu

import "golang.org/x/sys/cpu"

// The vector kernels of amd64 (ew_amd64.s): AVX-512 (F, BW, DQ, VL) where
// the CPU has it, else AVX2 with FMA and F16C, else none. On CPUs that run
// 512-bit vectors as two halves (AMD Zen 4) AVX-512 still wins on the
// transcendentals: fewer instructions, and masks in k registers.
func init() {
	avx2 := cpu.X86.HasAVX2 && cpu.X86.HasFMA && hasF16C()
	if avx2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
		simdLevels = append(simdLevels, simdAVX512)
	}
	if avx2 {
		simdLevels = append(simdLevels, simdAVX2)
	}
	if len(simdLevels) > 0 {
		simdLevel = simdLevels[0]
	}
}
