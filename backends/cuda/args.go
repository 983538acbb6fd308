package cuda

import (
	"strconv"
	"unsafe"

	"github.com/webtensor/webtensor/backends/lower"
)

// Limits of one launch's argument block (cu/prelude.cuh's WtArgs).
const (
	maxOps  = 12 // operands (inputs and outputs) of one kernel
	maxRank = 8  // dims of an iteration after coalescing
)

// wtArgs mirrors WtArgs in cu/prelude.cuh field for field: every kernel
// takes it as its one by-value parameter, so a launch is one cgo call that
// hands the driver these bytes. TestArgsLayout compiles static_asserts of
// the offsets below against the CUDA struct.
type wtArgs struct {
	Buf    [maxOps]uint64
	N      int64
	Shape  [maxRank]int64
	Off    [maxOps]int64
	St     [maxOps][maxRank]int64
	F      [lower.NumScalars]float64
	I      [lower.NumScalars]int64
	U      [lower.NumScalars]uint32
	S      [32]int64
	Err    uint64
	Launch uint32
	Pad    uint32
}

// bytes views the block as the bytes the driver copies; it holds no Go
// pointers, so cgo may pass it.
func (a *wtArgs) bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(a)), unsafe.Sizeof(*a))
}

// setScalars copies an expression's scalar slots.
func (a *wtArgs) setScalars(s *lower.Scalars) {
	a.F, a.I, a.U = s.F, s.I, s.U
}

// setOperand describes operand k: its element offset and strides.
func (a *wtArgs) setOperand(k, offset int, strides []int) {
	a.Off[k] = int64(offset)
	for d, s := range strides {
		a.St[k][d] = int64(s)
	}
}

// argOffsets lists WtArgs' fields and their byte offsets, for the layout
// test.
func argOffsets() map[string]uintptr {
	var a wtArgs
	return map[string]uintptr{
		"buf": unsafe.Offsetof(a.Buf), "n": unsafe.Offsetof(a.N), "shape": unsafe.Offsetof(a.Shape),
		"off": unsafe.Offsetof(a.Off), "st": unsafe.Offsetof(a.St), "f": unsafe.Offsetof(a.F),
		"i": unsafe.Offsetof(a.I), "u": unsafe.Offsetof(a.U), "s": unsafe.Offsetof(a.S),
		"err": unsafe.Offsetof(a.Err), "launch": unsafe.Offsetof(a.Launch),
	}
}

// argsLayoutSource is a kernel that compiles only if WtArgs has wtArgs's
// size and, with offsets (the host compiler's __builtin_offsetof; NVRTC has
// none), its field offsets. CUDA lays out a kernel parameter's struct as
// the host compiler does, so the host's layout is the device's.
// entry is the name every generated kernel is compiled under (here, not in
// launch.go, so that the package builds without cgo too).
const entry = "wt_kernel"

func argsLayoutSource(offsets bool) string {
	src := ""
	if offsets {
		for name, off := range argOffsets() {
			src += "static_assert(__builtin_offsetof(WtArgs, " + name + ") == " + strconv.Itoa(int(off)) + ", \"WtArgs." + name + " moved\");\n"
		}
	}
	src += "static_assert(sizeof(WtArgs) == " + strconv.Itoa(int(unsafe.Sizeof(wtArgs{}))) + ", \"WtArgs changed size\");\n"
	return src + "extern \"C\" __global__ void " + entry + "(const WtArgs A) {}\n"
}
