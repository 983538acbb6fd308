//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Lane kernels serve the ops that work on whole lines of a tensor along
// one axis (sorting, Fourier transforms) and the sparse products that
// address their operands themselves. A lane is the line along the axis for
// one index of the other (kept) dims; the kept dims of all operands are
// merged where every operand allows, so a kernel finds a lane's start with
// a few divisions (cu/lanes.cuh's wt_lane) and walks it by one stride, and
// strided inputs need no copy. Kernels are keyed by a short name of their
// body and the operands' signature, built without fmt: the sources are
// rendered only on a cache miss.

var lanesLib = mustRead("cu/lanes.cuh")

const (
	laneBlock   = 256
	laneKeptMax = 6 // kept dims after merging: WtArgs strides 0..5 (6 is the pair, 7 the axis)
)

// laneOp is one operand of a lane kernel: its offset, its strides over the
// kept dims, along the axis and to the imaginary part of a complex pair.
// A flat operand (scratch, an index vector) has none: the body indexes it.
type laneOp struct {
	t     *core.Tensor
	off   int
	kept  []int
	along int
	pair  int
	out   bool
}

// laneWalk is t walked along axis; for a complex tensor (a trailing pair
// dim) that dim is the pair, not a kept dim. A scalar is one lane of one
// element.
func laneWalk(t *core.Tensor, axis int, complex, out bool) laneOp {
	sh, st := t.Shape(), t.Strides()
	op := laneOp{t: t, off: t.Offset(), out: out}
	last := len(sh)
	if complex {
		last--
		op.pair = st[last]
	}
	for d := 0; d < last; d++ {
		if d == axis {
			op.along = st[d]
			continue
		}
		op.kept = append(op.kept, st[d])
	}
	return op
}

// flatOp is an operand the kernel addresses by itself from its start.
func flatOp(t *core.Tensor, out bool) laneOp {
	return laneOp{t: t, off: t.Offset(), out: out}
}

// laneKernel is one launch's operands over a set of lanes.
type laneKernel struct {
	op    string
	kept  []int // the lanes' shape, merged
	ops   []laneOp
	s     [32]int64
	check func(code uint32, a, b int64) string
}

// newLanes makes a lane kernel over lanes of shape kept (the shape of the
// walked operands without their axis and pair dims).
func newLanes(op string, kept []int, ops ...laneOp) (*laneKernel, error) {
	strides := make([][]int, len(ops))
	for k, o := range ops {
		strides[k] = o.kept
		if len(o.kept) != len(kept) {
			strides[k] = make([]int, len(kept))
		}
	}
	shape, merged := lower.Coalesce(kept, strides)
	if len(shape) > laneKeptMax {
		return nil, fmt.Errorf("cuda: %s: %d dims besides the axis after merging; lane kernels take at most %d", op, len(shape), laneKeptMax)
	}
	l := &laneKernel{op: op, kept: shape, ops: append([]laneOp{}, ops...)}
	for k := range l.ops {
		l.ops[k].kept = merged[k]
	}
	return l, nil
}

// lanes is the number of lanes.
func (l *laneKernel) lanes() int {
	n := 1
	for _, d := range l.kept {
		n *= d
	}
	return n
}

// with returns a copy of l with more operands (their kept strides zero).
func (l *laneKernel) with(more ...laneOp) *laneKernel {
	c := *l
	c.ops = append(append([]laneOp{}, l.ops...), more...)
	return &c
}

func (l *laneKernel) args() (wtArgs, error) {
	var a wtArgs
	if len(l.ops) > maxOps {
		return a, fmt.Errorf("cuda: %s: %d operands; a kernel takes at most %d", l.op, len(l.ops), maxOps)
	}
	a.N = int64(l.lanes())
	for d, s := range l.kept {
		a.Shape[d] = int64(s)
	}
	for k, o := range l.ops {
		p, err := ptrOf(o.t)
		if err != nil {
			return a, err
		}
		a.Buf[k] = p
		a.Off[k] = int64(o.off)
		for d, s := range o.kept {
			a.St[k][d] = int64(s)
		}
		a.St[k][6], a.St[k][7] = int64(o.pair), int64(o.along)
	}
	a.S = l.s
	return a, nil
}

// sig is the operands' part of a kernel key: the kept rank and each
// operand's dtype and direction.
func (l *laneKernel) sig(sb *strings.Builder) {
	sb.WriteString("|r")
	sb.WriteString(strconv.Itoa(len(l.kept)))
	for _, o := range l.ops {
		sb.WriteByte('|')
		sb.WriteString(o.t.DType().String())
		if o.out {
			sb.WriteByte('o')
		}
	}
}

// prologue opens a kernel: the libraries, the entry, idx (64-bit), KR
// (the kept rank) and the operand pointers p0...
func (l *laneKernel) prologue(libs ...string) string {
	var sb strings.Builder
	sb.WriteString(lanesLib)
	for _, s := range libs {
		sb.WriteString(s)
	}
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", laneBlock, entry)
	fmt.Fprintf(&sb, "typedef long long idx;\nconstexpr int KR = %d;\n", len(l.kept))
	for k, o := range l.ops {
		st := storageType(o.t.DType())
		c := "const "
		if o.out {
			c = ""
		}
		fmt.Fprintf(&sb, "%s%s* __restrict__ p%d = (%s%s*)A.buf[%d];\n", c, st, k, c, st, k)
	}
	return sb.String()
}

// run launches the kernel named key (to which run adds the operands'
// signature) on grid blocks of laneBlock threads; render makes its source
// on a cache miss.
func (b *Backend) runLanes(l *laneKernel, key string, grid [3]uint32, render func() string) error {
	a, err := l.args()
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.Grow(len(key) + 16*len(l.ops) + 8)
	sb.WriteString(key)
	l.sig(&sb)
	k, err := b.kernelFor(sb.String(), func() (string, error) { return render(), nil })
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", l.op, err)
	}
	return b.launch(launchSpec{op: l.op, k: k, grid: grid, block: laneBlock, check: l.check}, &a)
}

// blocksFor is the grid for jobs units of work of per threads each
// (capped: kernels loop over what one grid does not cover).
func (b *Backend) blocksFor(jobs int64, per int) [3]uint32 {
	return b.gridFor(jobs*int64(per), laneBlock)
}

// keptShape is shape without axis (and without its last dim when
// complex): the lanes of a tensor along axis.
func keptShape(shape core.Shape, axis int, complex bool) []int {
	last := len(shape)
	if complex {
		last--
	}
	var out []int
	for d := 0; d < last; d++ {
		if d != axis {
			out = append(out, shape[d])
		}
	}
	return out
}

// scratch is an uninitialised temporary of n elements of d.
func (b *Backend) scratch(n int, d core.DType) (*core.Tensor, error) {
	return core.Empty(b, core.Shape{n}, d)
}
