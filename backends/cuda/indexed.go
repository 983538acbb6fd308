//go:build linux && cgo

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Indexed kernels: the launch the shape and index ops share where the
// elementwise map cannot serve, because an element's position depends on
// more than its coordinates (an index read from another operand, a piece
// chosen by the axis coordinate, a padding rule). n threads run a
// grid-stride loop, each with its flat index i over an iteration shape and
// its coordinates c0..; operand k is p{k}, a pointer to its storage type,
// and at(k) is its element offset at the thread's coordinates through its
// own strides. A body of C++ does the rest: reads and checks an index
// (wt_fail), computes a source or target position, copies raw element bits
// or combines atomically. Copies move storage bits, so every dtype comes
// through exactly, as on the CPU.

var (
	indexLib = mustRead("cu/index.cuh")
	scanLib  = mustRead("cu/scan.cuh")
)

const genBlock = 256

// genOp is one operand: its storage and dtype (t), and how the iteration
// walks it (offset and strides over the iteration shape, which need not be
// t's own). out marks operands the kernel writes.
type genOp struct {
	t       *core.Tensor
	offset  int
	strides []int
	out     bool
}

// walkOf is t read through its own layout (broadcast to shape).
func walkOf(t *core.Tensor, shape core.Shape) genOp {
	return genOp{t: t, offset: t.Offset(), strides: lower.BroadcastStrides(t, shape)}
}

// written is out (contiguous, shaped like the iteration) as a written operand.
func written(out *core.Tensor) genOp {
	return genOp{t: out, offset: out.Offset(), strides: core.ContiguousStrides(out.Shape()), out: true}
}

// genKernel is one launch of an indexed kernel.
type genKernel struct {
	op    string
	shape []int
	ops   []genOp
	s     map[int]int64 // kernel parameters A.s[k]
	sc    *lower.Scalars
	check func(code uint32, a, b int64) string
}

// param sets A.s[k].
func (g *genKernel) param(k int, v int64) {
	if g.s == nil {
		g.s = map[int]int64{}
	}
	g.s[k] = v
}

// coalesce merges the iteration's dims where every operand allows (as the
// elementwise map does), keeping dim keep (-1: none) as a dim of its own
// so a body can still read its coordinate; it returns keep's new position.
func (g *genKernel) coalesce(keep int) int {
	strides := make([][]int, len(g.ops))
	part := func(lo, hi int) ([]int, [][]int) {
		for k, o := range g.ops {
			strides[k] = o.strides[lo:hi]
		}
		return lower.Coalesce(g.shape[lo:hi], strides)
	}
	if keep < 0 {
		shape, st := part(0, len(g.shape))
		g.shape = shape
		for k := range g.ops {
			g.ops[k].strides = st[k]
		}
		return -1
	}
	before, stB := part(0, keep)
	after, stA := part(keep+1, len(g.shape))
	shape := append(append(append([]int{}, before...), g.shape[keep]), after...)
	for k := range g.ops {
		g.ops[k].strides = append(append(append([]int{}, stB[k]...), g.ops[k].strides[keep]), stA[k]...)
	}
	g.shape = shape
	return len(before)
}

// at is the C++ element offset of operand k at the thread's coordinates.
func (g *genKernel) at(k int) string {
	return offsetCode(k, len(g.shape), inOrder(g.shape, g.ops[k].strides), "i")
}

// numel is the iteration's element count.
func (g *genKernel) numel() int64 {
	n := int64(1)
	for _, d := range g.shape {
		n *= int64(d)
	}
	return n
}

// args fills the argument block.
func (g *genKernel) args(n int64) (wtArgs, error) {
	var a wtArgs
	if len(g.shape) > maxRank {
		return a, fmt.Errorf("cuda: %s: %d dims after merging; kernels take at most %d", g.op, len(g.shape), maxRank)
	}
	if len(g.ops) > maxOps {
		return a, fmt.Errorf("cuda: %s: %d operands; a kernel takes at most %d", g.op, len(g.ops), maxOps)
	}
	a.N = n
	for d, s := range g.shape {
		a.Shape[d] = int64(s)
	}
	for k, o := range g.ops {
		p, err := ptrOf(o.t)
		if err != nil {
			return a, err
		}
		a.Buf[k] = p
		a.setOperand(k, o.offset, o.strides)
	}
	for k, v := range g.s {
		a.S[k] = v
	}
	if g.sc != nil {
		a.setScalars(g.sc)
	}
	return a, nil
}

// wide reports whether positions need 64-bit integers: when the thread
// count, an operand's reach or its storage comes near 2^31 (positions
// computed from index values are 64-bit anyway).
func (g *genKernel) wide(n int64) bool {
	const limit = math.MaxInt32 - 1<<24
	if n >= limit {
		return true
	}
	for _, o := range g.ops {
		if int64(o.t.Storage().Len()/max(o.t.DType().Size(), 1)) >= limit {
			return true
		}
		// Partial sums of an offset (an offset moved back by a piece's
		// start, negative strides) stay within this reach.
		reach := int64(abs(o.offset))
		if len(o.strides) == len(g.shape) {
			for d, s := range o.strides {
				reach += int64(g.shape[d]-1) * int64(abs(s))
			}
		} else {
			// Walked over a shape of its own (the body indexes it): its
			// positions lie in its storage, partial sums within twice that.
			reach = 2 * int64(o.t.Storage().Len()/max(o.t.DType().Size(), 1))
		}
		if reach >= limit {
			return true
		}
	}
	return false
}

// decls declares p0.. for the operands.
func (g *genKernel) decls() string {
	var sb strings.Builder
	for k, o := range g.ops {
		st := storageType(o.t.DType())
		c := "const "
		if o.out {
			c = ""
		}
		fmt.Fprintf(&sb, "%s%s* __restrict__ p%d = (%s%s*)A.buf[%d];\n", c, st, k, c, st, k)
	}
	return sb.String()
}

// coords declares c0.. for the flat index i.
func coords(rank int) string {
	if rank == 1 {
		return "const idx c0 = i;\n"
	}
	return coordCode(rank, "i")
}

// runIndexed launches g with body as each thread's work.
func (b *Backend) runIndexed(g *genKernel, body string) error {
	return b.runIndexedKeyed(g, body, func() string { return body })
}

// runIndexedKeyed launches g, each thread running the C++ body renders.
// The source is rendered only when the kernel is not compiled yet, since
// building it takes longer than a launch: key must tell apart every body
// the call site renders, besides what g's signature does (sig).
func (b *Backend) runIndexedKeyed(g *genKernel, key string, body func() string) error {
	n := g.numel()
	if n == 0 {
		return nil
	}
	return b.launchIndexed(g, n, b.gridFor(n, genBlock), "gen|"+key, func(wide bool) string {
		var sb strings.Builder
		sb.WriteString(g.prologue(wide))
		fmt.Fprintf(&sb, "for (idx i = (idx)blockIdx.x * %d + (idx)threadIdx.x; i < n; i += (idx)gridDim.x * %d) {\n", genBlock, genBlock)
		sb.WriteString(coords(len(g.shape)))
		sb.WriteString(body())
		sb.WriteString("\n}\n}\n")
		return sb.String()
	})
}

// sig is what an indexed kernel's source depends on besides its call
// site's choices: the rank, 64-bit positions, and each operand's storage
// type, whether it is written and whether it is walked in order (at).
func (g *genKernel) sig(wide bool) string {
	buf := make([]byte, 0, 64)
	buf = append(buf, '|', byte('0'+len(g.shape)))
	if wide {
		buf = append(buf, 'w')
	}
	for _, o := range g.ops {
		buf = append(buf, '|')
		buf = append(buf, o.t.DType().String()...)
		if o.out {
			buf = append(buf, 'o')
		}
		if inOrder(g.shape, o.strides) {
			buf = append(buf, 'c')
		}
	}
	return string(buf)
}

// prologue is a kernel's source up to its body: the entry, idx, n (the
// thread count) and the operand pointers.
func (g *genKernel) prologue(wide bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", genBlock, entry)
	fmt.Fprintf(&sb, "typedef %s idx;\nconst idx n = (idx)A.n;\n", idxType(wide))
	sb.WriteString(g.decls())
	return sb.String()
}

// launchIndexed launches the kernel key (with g's signature) on grid
// blocks of genBlock threads with n in A.n; render makes its source from
// g's prologue on first use. Keys starting "scan" get cu/scan.cuh too.
func (b *Backend) launchIndexed(g *genKernel, n int64, grid [3]uint32, key string, render func(wide bool) string) error {
	a, err := g.args(n)
	if err != nil {
		return err
	}
	wide := g.wide(n)
	k, err := b.kernelFor(key+g.sig(wide), func() (string, error) {
		lib := indexLib
		if strings.HasPrefix(key, "scan") {
			lib += scanLib
		}
		return lib + render(wide), nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", g.op, err)
	}
	return b.launch(launchSpec{op: g.op, k: k, grid: grid, block: genBlock, check: g.check}, &a)
}

// fillBits is value stored as dtype d by the CPU's rule (numerics.PutF64), as
// raw bits for wt_from_bits.
func fillBits(d core.DType, value float64) int64 {
	raw := make([]byte, 8)
	numerics.PutF64(d, raw, 0, value)
	return int64(binary.LittleEndian.Uint64(raw))
}

// zeroElem is the C++ zero of a storage type (all bits clear).
func zeroElem(d core.DType) string { return "wt_from_bits<" + storageType(d) + ">(0)" }

// outOfBounds words the CPU's message for an index outside [0, size)
// (wt_fail code 1 with the index value).
func outOfBounds(axis, size int) func(uint32, int64, int64) string {
	return func(_ uint32, v, _ int64) string {
		return fmt.Sprintf("index %d is out of bounds for axis %d with size %d", v, axis, size)
	}
}

// axisWalk is t walked over shape with its stride along axis set to 0 (the
// kernel adds index*stride itself) and that stride.
func axisWalk(t *core.Tensor, strides []int, axis int) (genOp, int64) {
	st := append([]int{}, strides...)
	along := st[axis]
	st[axis] = 0
	return genOp{t: t, offset: t.Offset(), strides: st}, int64(along)
}

// zeroFill clears t's storage (a queued memset, not a kernel).
func (b *Backend) zeroFill(t *core.Tensor) error {
	p, err := ptrOf(t)
	if err != nil {
		return err
	}
	if n := t.Storage().Len(); n > 0 {
		return b.dev.zero(p, uint64(n))
	}
	return nil
}
