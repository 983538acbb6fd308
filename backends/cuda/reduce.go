//go:build linux && cgo

package cuda

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The reduction kernel: groups of G threads (G = 1 or 32..256) each own
// one output (or one part of one, when few long groups are split over
// several blocks and their partial accumulators merged by a second
// kernel). A thread pushes every G-th member of its group into an
// accumulator (cu/reduce.cuh); the group merges them through warp shuffles.
// G = 1 suits reductions whose kept dim is the contiguous one (adjacent
// threads read adjacent outputs' members); wide groups suit rows.

var reduceLib = mustRead("cu/reduce.cuh")

// reduction describes one reduction launch.
type reduction struct {
	op    string
	frame lower.Frame
	ins   []*core.Tensor // operands, each broadcast to frame.Shape
	out   *core.Tensor   // contiguous, one element per group
	acc   string         // accumulator type, e.g. "SumAcc<f64>"
	value string         // dialect expression over x0.. pushed per member
	final string         // CUDA C++ over acc (and R, the member count): the output value
	sc    *lower.Scalars
}

const (
	reduceBlock   = 256
	partialBytes  = 32 // one accumulator slot of a split reduction
	maxKeptRank   = 4  // kept dims after merging (WtArgs slots 0..3)
	maxReduceRank = 4  // reduced dims after merging (slots 4..7)
)

func (b *Backend) reduce(r reduction) error {
	f := r.frame
	O, R := f.Groups(), f.Members()
	if O == 0 {
		return nil
	}
	if len(r.ins)+2 > maxOps {
		return fmt.Errorf("cuda: %s: %d operands; a reduction takes at most %d", r.op, len(r.ins), maxOps-2)
	}
	var a wtArgs
	l, ops, err := frameArgs(r.op, f, r.ins, &a)
	if err != nil {
		return err
	}
	types := make([]string, len(ops))
	for k, o := range ops {
		types[k] = o.compute
	}
	outPtr, err := ptrOf(r.out)
	if err != nil {
		return err
	}
	if r.sc != nil {
		a.setScalars(r.sc)
	}
	g, parts := b.reduceShape(O, R, l)
	chunk := (R + parts - 1) / max(parts, 1)
	a.N, a.S[0], a.S[1], a.S[2] = int64(O), int64(R), int64(parts), int64(chunk)
	wide := reduceNeeds64(O, R, parts, l, r.ins)
	value := translate(r.value, single(types...))
	shape := reduceShape{keptRank: len(l.KeptShape), redRank: len(l.RedShape), g: g, wide: wide}
	outIdx := len(r.ins)
	if parts == 1 {
		a.Buf[outIdx] = outPtr
		a.Off[outIdx] = int64(r.out.Offset())
		return b.reduceLaunch(r, ops, shape, 0, value, &a, O)
	}
	// Split: partial accumulators, then a merge kernel per output.
	scratch, err := core.Empty(b, core.Shape{O * parts * partialBytes}, core.U8)
	if err != nil {
		return err
	}
	defer scratch.Release()
	sp, _ := ptrOf(scratch)
	a.Buf[outIdx] = sp
	if err := b.reduceLaunch(r, ops, shape, 1, value, &a, O*parts); err != nil {
		return err
	}
	var m wtArgs
	m.N, m.S[0], m.S[1], m.S[2] = int64(O), int64(R), int64(parts), int64(chunk)
	m.Buf[0], m.Buf[1] = sp, outPtr
	m.Off[1] = int64(r.out.Offset())
	if r.sc != nil {
		m.setScalars(r.sc)
	}
	mg := min(256, max(32, nextPow2(parts)))
	merge := reduceShape{g: mg, wide: wide}
	return b.reduceLaunch(r, nil, merge, 2, "", &m, O)
}

// reduceShape is what a reduction kernel is specialised on.
type reduceShape struct {
	keptRank, redRank, g int
	wide                 bool
	cache                int // row programs: members per thread kept in registers (0: none)
}

// reduceShape picks the group size and the number of parts per group.
func (b *Backend) reduceShape(O, R int, l lower.FrameLayout) (g, parts int) {
	rowContig := len(l.RedShape) > 0 && l.RedStrides[0][len(l.RedShape)-1] == 1
	keptContig := len(l.KeptShape) > 0 && l.KeptStrides[0][len(l.KeptShape)-1] == 1
	switch {
	case R <= 1:
		g = 1
	case keptContig && !rowContig && O >= 1024:
		g = 1
	default:
		g = min(256, max(32, nextPow2((R+7)/8)))
	}
	want := max(b.props.sms, 1) * 2048 // threads that fill the GPU
	parts = 1
	if O*g < want && R/g > 64 {
		parts = min((want+O*g-1)/(O*g), (R+g*64-1)/(g*64))
	}
	return g, max(parts, 1)
}

// frameArgs lays operands ts out over frame f for a frame kernel (a
// reduction, a row program, a group loop) into a: each operand's pointer,
// offset and kept and reduced strides, and the merged shape. It returns the
// layout and each operand's storage and compute types.
func frameArgs(op string, f lower.Frame, ts []*core.Tensor, a *wtArgs) (lower.FrameLayout, []operand, error) {
	l := f.Layout(ts...)
	if len(l.KeptShape) > maxKeptRank || len(l.RedShape) > maxReduceRank {
		return l, nil, fmt.Errorf("cuda: %s: %d kept and %d reduced dims after merging; kernels take at most %d and %d",
			op, len(l.KeptShape), len(l.RedShape), maxKeptRank, maxReduceRank)
	}
	ops := make([]operand, len(ts))
	for k, t := range ts {
		ptr, err := ptrOf(t)
		if err != nil {
			return l, nil, err
		}
		a.Buf[k] = ptr
		a.Off[k] = int64(l.Offsets[k])
		for d, s := range l.KeptStrides[k] {
			a.St[k][d] = int64(s)
		}
		for d, s := range l.RedStrides[k] {
			a.St[k][maxKeptRank+d] = int64(s)
		}
		ops[k] = operand{storage: storageType(t.DType()), compute: computeType(t.DType())}
	}
	for d, s := range l.KeptShape {
		a.Shape[d] = int64(s)
	}
	for d, s := range l.RedShape {
		a.Shape[maxKeptRank+d] = int64(s)
	}
	return l, ops, nil
}

func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

func reduceNeeds64(O, R, parts int, l lower.FrameLayout, ts []*core.Tensor) bool {
	const limit = 1 << 30
	if O*parts >= limit || R >= limit || O*parts*partialBytes >= limit {
		return true
	}
	for k := range ts {
		reach := l.Offsets[k]
		for d, s := range l.KeptStrides[k] {
			reach += (l.KeptShape[d] - 1) * abs(s)
		}
		for d, s := range l.RedStrides[k] {
			reach += (l.RedShape[d] - 1) * abs(s)
		}
		if reach >= limit || ts[k].Storage().Len() >= limit {
			return true
		}
	}
	return false
}

func (b *Backend) reduceLaunch(r reduction, ops []operand, s reduceShape, mode int, value string, a *wtArgs, jobs int) error {
	out := storageType(r.out.DType())
	var kb strings.Builder
	kb.WriteString("reduce|")
	for _, v := range []int{mode, s.keptRank, s.redRank, s.g} {
		kb.WriteString(strconv.Itoa(v))
		kb.WriteByte(',')
	}
	if s.wide {
		kb.WriteByte('w')
	}
	for _, part := range []string{r.acc, out, r.final, value} {
		kb.WriteByte('|')
		kb.WriteString(part)
	}
	for _, o := range ops {
		kb.WriteByte('|')
		kb.WriteString(o.storage)
	}
	key := kb.String()
	k, err := b.kernelFor(key, func() (string, error) { return reduceSource(r, ops, s, mode, value, out), nil })
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", r.op, err)
	}
	perBlock := reduceBlock / s.g
	blocks := (jobs + perBlock - 1) / perBlock
	grid := [3]uint32{uint32(min(blocks, max(b.props.sms, 1)*32)), 1, 1}
	return b.launch(launchSpec{op: r.op, k: k, grid: grid, block: reduceBlock}, a)
}

// reduceSource writes the kernel: mode 0 reduces into the output, mode 1
// into partial accumulators, mode 2 merges partials into the output.
func reduceSource(r reduction, ops []operand, s reduceShape, mode int, value, out string) string {
	var sb strings.Builder
	sb.WriteString(reduceLib)
	fmt.Fprintf(&sb, "typedef %s ACC;\nstatic_assert(sizeof(ACC) <= %d, \"accumulator too large for a partial slot\");\n", r.acc, partialBytes)
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", reduceBlock, entry)
	fmt.Fprintf(&sb, "typedef %s idx;\nconstexpr int G = %d;\nconstexpr int GPB = %d / G;\n", idxType(s.wide), s.g, reduceBlock)
	sb.WriteString("__shared__ ACC sh[8];\nconst idx O = (idx)A.n, R = (idx)A.s[0], P = (idx)A.s[1], chunk = (idx)A.s[2];\n")
	sb.WriteString("const int lane = threadIdx.x % G, grp = threadIdx.x / G;\n")
	for k, o := range ops {
		fmt.Fprintf(&sb, "const %s* __restrict__ in%d = (const %s*)A.buf[%d];\n", o.storage, k, o.storage, k)
	}
	jobs := "O * P"
	if mode == 2 {
		jobs = "O"
		sb.WriteString("const ACC* __restrict__ parts = (const ACC*)A.buf[0];\n")
		fmt.Fprintf(&sb, "%s* __restrict__ out = (%s*)A.buf[1];\n", out, out)
	} else if mode == 1 {
		fmt.Fprintf(&sb, "ACC* __restrict__ parts = (ACC*)A.buf[%d];\n", len(ops))
	} else {
		fmt.Fprintf(&sb, "%s* __restrict__ out = (%s*)A.buf[%d];\n", out, out, len(ops))
	}
	fmt.Fprintf(&sb, "for (idx job0 = (idx)blockIdx.x * GPB; job0 < %s; job0 += (idx)gridDim.x * GPB) {\n", jobs)
	fmt.Fprintf(&sb, "const idx job = job0 + grp;\nACC acc;\nacc.init();\nif (job < %s) {\n", jobs)
	if mode == 2 {
		sb.WriteString("for (idx p = lane; p < P; p += G) acc.merge(parts[job * P + p]);\n")
	} else {
		sb.WriteString("const idx o = job / P, part = job % P;\n")
		sb.WriteString(keptOffsets(len(ops), s.keptRank))
		sb.WriteString("const idx r1 = min(R, (part + 1) * chunk);\n")
		sb.WriteString("for (idx r = part * chunk + lane; r < r1; r += G) {\n")
		sb.WriteString(memberOffsets(len(ops), s.redRank))
		for k, o := range ops {
			fmt.Fprintf(&sb, "const %s x%d = ld(in%d[kb%d + ro%d]);\n", o.compute, k, k, k, k)
		}
		fmt.Fprintf(&sb, "acc.push(%s, (i64)r);\n}\n", value)
	}
	sb.WriteString("}\ngroup_reduce<G>(acc, sh);\n")
	fmt.Fprintf(&sb, "if (lane == 0 && job < %s) {\n", jobs)
	if mode == 1 {
		sb.WriteString("parts[job] = acc;\n")
	} else {
		fmt.Fprintf(&sb, "put(&out[(idx)A.off[%d] + job], %s);\n", map[bool]int{true: 1, false: len(ops)}[mode == 2], r.final)
	}
	sb.WriteString("}\n}\n}\n")
	return sb.String()
}

// keptOffsets declares kb0.., each operand's offset for group o.
func keptOffsets(n, rank int) string {
	var sb strings.Builder
	if rank > 1 {
		sb.WriteString("idx q_ = o;\n")
		for d := rank - 1; d >= 1; d-- {
			fmt.Fprintf(&sb, "const idx k%d = q_ %% (idx)A.shape[%d]; q_ /= (idx)A.shape[%d];\n", d, d, d)
		}
		sb.WriteString("const idx k0 = q_;\n")
	} else if rank == 1 {
		sb.WriteString("const idx k0 = o;\n")
	}
	for k := range n {
		fmt.Fprintf(&sb, "const idx kb%d = (idx)A.off[%d]", k, k)
		for d := range rank {
			fmt.Fprintf(&sb, " + k%d * (idx)A.st[%d][%d]", d, k, d)
		}
		sb.WriteString(";\n")
	}
	return sb.String()
}

// memberOffsets declares ro0.., each operand's offset of member r.
func memberOffsets(n, rank int) string {
	var sb strings.Builder
	if rank > 1 {
		sb.WriteString("idx m_ = r;\n")
		for d := rank - 1; d >= 1; d-- {
			fmt.Fprintf(&sb, "const idx j%d = m_ %% (idx)A.shape[%d]; m_ /= (idx)A.shape[%d];\n", d, maxKeptRank+d, maxKeptRank+d)
		}
		sb.WriteString("const idx j0 = m_;\n")
	} else if rank == 1 {
		sb.WriteString("const idx j0 = r;\n")
	}
	for k := range n {
		fmt.Fprintf(&sb, "const idx ro%d = (idx)0", k)
		for d := range rank {
			fmt.Fprintf(&sb, " + j%d * (idx)A.st[%d][%d]", d, k, maxKeptRank+d)
		}
		sb.WriteString(";\n")
	}
	return sb.String()
}
