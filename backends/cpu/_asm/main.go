package main

import (
	"flag"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var (
	dispatch = flag.String("dispatch", "", "write the Go switches that call the kernels to this file")
	kernels  = flag.String("kernels", "ew", "which kernels to write: ew (elementwise) or reduce (reductions and row kernels)")
)

func main() {
	flag.Parse()
	ConstraintExpr("amd64")
	if *kernels == "reduce" {
		genReduceFile()
		clearHighOnReturn()
		alignData("rdConstTable")
		return
	}
	for _, s := range []*isa{avx2, avx512} {
		genBinary(s)
		genCompare(s)
		genWhere(s)
		genCasts(s)
		genUnary(s)
	}
	genCPUID()
	emitConstants()
	emitGeluPieces()
	if *dispatch != "" {
		writeDispatch(*dispatch)
	}
	Generate()
	clearHighOnReturn()
	alignData("ewConstTable")
}

// genCPUID reads the F16C bit (CPUID leaf 1, ECX bit 29), which
// golang.org/x/sys/cpu does not report.
func genCPUID() {
	TEXT("hasF16C", NOSPLIT, "func() bool")
	Pragma("noescape")
	Doc("hasF16C reports whether the CPU converts half precision (F16C).")
	MOVL(U32(1), EAX)
	XORL(ECX, ECX)
	CPUID()
	SHRL(U8(29), ECX)
	ANDL(U32(1), ECX)
	Store(CL, ReturnIndex(0))
	RET()
}
