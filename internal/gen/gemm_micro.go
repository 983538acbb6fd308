package main

import (
	"fmt"
	"go/format"
	"strings"
)

// The CPU backend's portable GEMM micro-kernel (the path of machines
// without the assembly kernels: arm64, amd64 without AVX2) is one k step
// written gemmKU times over: the compiler neither unrolls loops nor keeps
// a helper's accumulators in registers as well, so the unrolled body is
// written out, and written here once.

const (
	microRows  = 4 // gemmMR: A's packed slivers are k-major groups of 4
	microCols  = 2 // B's are k-major pairs
	microSteps = 8 // gemmKU: the k steps of one trip
)

func gemmMicroFile(*registry) ([]file, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\npackage cpu\n\n", header)
	fmt.Fprintf(&b, `// gemmMicro4x2 returns the 4x2 product of a packed A sliver (k-major groups
// of 4) and a packed B sliver (k-major pairs), both a multiple of gemmKU
// long. The re-slicing at the top of the loop lets the compiler drop every
// bounds check inside it; the body is one k step per three lines
// (internal/gen/gemm_micro.go writes them).
func gemmMicro4x2(ap, bp []float32) [8]float32 {
	var c00, c01, c10, c11, c20, c21, c30, c31 float32
	for len(ap) >= %[1]d && len(bp) >= %[2]d {
		a, b := ap[:%[1]d:%[1]d], bp[:%[2]d:%[2]d]
`, microRows*microSteps, microCols*microSteps)
	for k := range microSteps {
		lhs := "b0, b1, a0, a1, a2, a3 :="
		if k > 0 {
			lhs = "b0, b1, a0, a1, a2, a3 ="
		}
		a := k * microRows
		fmt.Fprintf(&b, "\t\t%s b[%d], b[%d], a[%d], a[%d], a[%d], a[%d]\n", lhs, 2*k, 2*k+1, a, a+1, a+2, a+3)
		b.WriteString("\t\tc00, c01, c10, c11 = c00+a0*b0, c01+a0*b1, c10+a1*b0, c11+a1*b1\n")
		b.WriteString("\t\tc20, c21, c30, c31 = c20+a2*b0, c21+a2*b1, c30+a3*b0, c31+a3*b1\n")
	}
	fmt.Fprintf(&b, "\t\tap, bp = ap[%d:], bp[%d:]\n\t}\n\treturn [8]float32{c00, c01, c10, c11, c20, c21, c30, c31}\n}\n",
		microRows*microSteps, microCols*microSteps)
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, err
	}
	return []file{{"backends/cpu/gemm_micro_gen.go", src}}, nil
}
