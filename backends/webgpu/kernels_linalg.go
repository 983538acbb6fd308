package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// matmul variants (wgsl/linalg_matmul.wgsl); the tuner picks one per device and
// shape class.
const (
	variantRegBlock   = "regblock"   // strided scalar loads, 4x4 blocks: any layout and dtype
	variantRegBlock4  = "regblock4"  // vec4 loads, 8x8 blocks (linalg_matmul_vec_nn.wgsl)
	variantRegBlock16 = "regblock16" // vec4 loads, 16x8 blocks
	variantNT8        = "nt8"        // a @ W^T: vec4 dot products, 8x8 blocks
	variantNT16       = "nt16"       // a @ W^T: 16x8 blocks
	variantTN8        = "tn8"        // x^T @ g: vec4 outer products, 8x8 blocks
	variantTN16       = "tn16"       // x^T @ g: 16x8 blocks
	variantTiled      = "tiled"      // 16x16 workgroup-memory tiles
)

// kStep is how far along K one loop iteration of a variant's threads gets:
// on a device with a loop limit (gpu_looplimit.go) K / kStep must stay under
// it. Measured on lavapipe: regblock was wrong from K = 66,000, the vec4
// kernels from 270,000, tiled still right there.
func kStep(variant string) int {
	if t, ok := synthTile(variant); ok {
		return t.kStep()
	}
	switch variant {
	case variantRegBlock:
		return 1
	case variantTiled:
		return 16
	}
	return 4
}

// loopSafeMatmul keeps a product's K loop within the device's loop limit:
// a variant that would pass it gives way to the tiled kernel, and a K too
// long even for that is refused (it would be silently wrong).
func (g *Backend) loopSafeMatmul(variant string, kk int, batch core.Shape, m, n int, colsum bool) (string, error) {
	limit := g.loopLimit() * 3 / 4 // room for the kernel's other loops
	if limit == 0 || kk/kStep(variant) < limit {
		return variant, nil
	}
	tiledFits := batch.Numel() <= 65535 && (m+15)/16 <= 65535 && (n+15)/16 <= 65535
	if !colsum && tiledFits && kk/kStep(variantTiled) < limit {
		return variantTiled, nil
	}
	return "", fmt.Errorf("webgpu: a matmul over K = %d would loop about %d times in one GPU thread, but this driver (%s) silently stops every shader loop after %d iterations in all, which would give a wrong result; use device cpu for this size",
		kk, kk/kStep(variant), strings.TrimSpace(g.info.DriverDescription), g.loopLimit())
}

// vecLayout is which dims of a and b a vec4 variant reads four at a time.
type vecLayout int

const (
	layoutNone vecLayout = iota
	layoutNN             // a's k-rows and b's n-rows contiguous: a @ b
	layoutNT             // a's and b's k-rows: a @ W^T, W a contiguous [N, K]
	layoutTN             // a's m-rows and b's n-rows: x^T @ g, x a contiguous [K, M]
)

// vecVariant is the block (rows, columns) of c each thread of a vec4
// variant owns and the layout it needs; scripts/gen_matmul_vec.py writes
// the kernels.
type vecVariant struct {
	rows, cols int
	layout     vecLayout
}

var vecVariants = map[string]vecVariant{
	variantRegBlock4: {8, 8, layoutNN}, variantRegBlock16: {16, 8, layoutNN},
	variantNT8: {8, 8, layoutNT}, variantNT16: {16, 8, layoutNT},
	variantTN8: {8, 8, layoutTN}, variantTN16: {16, 8, layoutTN},
}

var matmulVariants = []string{variantRegBlock, variantTiled}

// vecCandidates are what the tuner times for each layout, the class suffix
// its decisions are kept under, and the untimed default on a software
// driver (where the scalar regblock is 5-10x slower).
var vecCandidates = map[vecLayout]struct {
	variants []string
	suffix   string
	def      string
}{
	layoutNN: {[]string{variantRegBlock4, variantRegBlock16, variantRegBlock, variantTiled}, "-v4", variantRegBlock4},
	layoutNT: {[]string{variantNT8, variantNT16, variantRegBlock, variantTiled}, "-nt", variantNT8},
	layoutTN: {[]string{variantTN8, variantTN16, variantRegBlock, variantTiled}, "-tn", variantTN8},
}

// vecLayoutOf says which vec4 layout a product of f32 a [.., m, kk] and
// b [.., kk, n] has, if any: the unit-stride dims must be contiguous, every
// other stride and offset a multiple of 4 (16-byte aligned vec4s), and the
// vec4 dims a multiple of 4 long.
func vecLayoutOf(a, b *core.Tensor, batch core.Shape, m, kk, n int) vecLayout {
	aligned := allMultiplesOf4
	if a.DType() != core.F32 || b.DType() != core.F32 || !aligned(a.Offset(), b.Offset()) ||
		!aligned(batchStrides(a, batch)...) || !aligned(batchStrides(b, batch)...) {
		return layoutNone
	}
	as, bs := a.Strides(), b.Strides()
	am, ak := as[len(as)-2], as[len(as)-1]
	bk, bn := bs[len(bs)-2], bs[len(bs)-1]
	switch {
	case ak == 1 && bn == 1 && aligned(am, bk, kk, n):
		return layoutNN
	case ak == 1 && bk == 1 && aligned(am, bn, kk):
		return layoutNT
	case am == 1 && bn == 1 && aligned(ak, bk, m, n):
		return layoutTN
	}
	return layoutNone
}

// tuneMinWork is the smallest product (M*K*N) worth timing; below it launch
// overhead hides any difference and the device's default variant runs.
const tuneMinWork = 64 * 64 * 64

// matmulOperands views a and b as batch x matrix with broadcast batch dims.
func matmulKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return err
	}
	if d.AVec {
		a = a.Reshape(core.Shape{1, d.K})
	}
	if d.BVec {
		b = b.Reshape(core.Shape{d.K, 1})
	}
	if d.AVec || d.BVec { // the kernel writes c as [batch..., M, N]
		out = out.Reshape(append(d.Batch.Clone(), d.M, d.N))
	}
	if out.DType() == core.I64 {
		return gpuOf(k).matmulI64(a, b, out, d.Batch, d.M, d.K, d.N)
	}
	return gpuOf(k).matmul(a, b, out, d.Batch, d.M, d.K, d.N, "")
}

// outerKernel is matmul of a column by a row (K = 1).
func outerKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	m, n := a.Shape()[0], b.Shape()[0]
	if out.DType() == core.I64 {
		return gpuOf(k).matmulI64(a.Reshape(core.Shape{m, 1}), b.Reshape(core.Shape{1, n}), out, nil, m, 1, n)
	}
	return gpuOf(k).matmul(a.Reshape(core.Shape{m, 1}), b.Reshape(core.Shape{1, n}), out, nil, m, 1, n, "")
}

// matmul writes out = a @ b over batch dims batch; a is [..., M, K] and b
// [..., K, N], both broadcast over batch. variant "" asks the tuner.
func (g *Backend) matmul(a, b, out *core.Tensor, batch core.Shape, m, kk, n int, variant string) error {
	return g.matmulEpilogue(a, b, out, batch, m, kk, n, variant, nil)
}

// epilogue is elementwise work done as a matmul stores its result, so
// bias + activation (+ residual) cost no extra pass over memory: expr is a
// WGSL f32 expression over x0, the product, and x1.., the extras, each
// broadcast to the output [batch..., M, N].
type epilogue struct {
	expr   string
	extras []*core.Tensor
	// also, when set, is a second expression over the same values, stored
	// into out2 (a fresh f32 tensor of the product's shape): a
	// pre-activation and its activation from one product.
	also string
	out2 *core.Tensor
	// colsum, when set, is a fresh f32 [N] tensor that gets b's column
	// sums (a TN product only; see MatmulColumnSums).
	colsum *core.Tensor
}

// matmulEpilogue is matmul with an optional epilogue (nil: plain store).
func (g *Backend) matmulEpilogue(a, b, out *core.Tensor, batch core.Shape, m, kk, n int, variant string, ep *epilogue) error {
	if out.Numel() == 0 {
		return nil
	}
	if kk == 0 && ep == nil {
		return g.fill(out, 0)
	}
	if ep != nil {
		bound := epilogueBound("matmul") // a, b, out; a second output or the column sums bind one more each
		if ep.also != "" {
			bound++
		}
		if ep.colsum != nil {
			bound++
		}
		if room := g.epilogueRoom(bound); len(ep.extras) > room || len(batch) > wgsl.MaxRank-2 {
			return fmt.Errorf("webgpu: matmul epilogue with %d extras over %d batch dims; at most %d and %d",
				len(ep.extras), len(batch), room, wgsl.MaxRank-2)
		}
	}
	colsum := ep != nil && ep.colsum != nil
	if fa, fo, fep, ok := foldBatchIntoRows(a, b, out, batch, m, ep); ok && !colsum {
		return g.matmulEpilogue(fa, b, fo, nil, batch.Numel()*m, kk, n, variant, fep)
	}
	layout := vecLayoutOf(a, b, batch, m, kk, n)
	cands, vec4 := vecCandidates[layout]
	def := g.tuner.fallback // what runs without measurement
	if vec4 && def == variantRegBlock {
		def = cands.def
	}
	if variant == "" && m*kk*n < tuneMinWork {
		variant = def
	}
	if vv, isVec := vecVariants[variant]; isVec && vv.layout != layout {
		variant = variantRegBlock
	}
	if _, isSyn := synthTile(variant); isSyn && (layout != layoutNN || colsum) {
		variant = def
	}
	if variant == variantTiled && (batch.Numel() > 65535 || (m+15)/16 > 65535 || (n+15)/16 > 65535) {
		variant = variantRegBlock // the tiled grid has one workgroup layer per batch entry
	}
	if variant == "" && batch.Numel() > 65535 {
		variant = variantRegBlock
	}
	if colsum {
		// Only the TN kernels sum b's columns. The product's decision
		// stands when it is one of them; nothing is timed here, since the
		// class's timings are the plain product's.
		if layout != layoutTN || len(batch) != 0 {
			return fmt.Errorf("webgpu: column sums ride only on an unbatched x^T @ g product of vec4 rows, got shapes %v and %v",
				a.Shape(), b.Shape())
		}
		if variant == "" {
			variant = g.tuner.decided("matmul", matmulClass(1, m, kk, n)+cands.suffix)
		}
		if vecVariants[variant].layout != layoutTN {
			variant = cands.def
		}
	}
	if variant == "" {
		workload := map[string]int{"batch": batch.Numel(), "m": m, "k": kk, "n": n}
		variants, class := matmulVariants, matmulClass(batch.Numel(), m, kk, n)
		if vec4 {
			variants, class = cands.variants, class+cands.suffix
		}
		variant = g.tuner.choose("matmul", class, workload, variants, def, func(v string) error {
			return g.matmulEpilogue(a, b, out, batch, m, kk, n, v, ep)
		})
	}
	tile, isSyn := synthTile(variant)
	if isSyn && !tile.fits(batch.Numel(), m, n) {
		variant, isSyn = cands.def, false
	}
	variant, err := g.loopSafeMatmul(variant, kk, batch, m, n, colsum)
	if err != nil {
		return err
	}
	if isSyn && variant != tile.Variant() { // the loop limit moved it to the tiled kernel
		isSyn = false
	}
	ct := physical(out.DType())
	t := physical(a.DType())
	key := fmt.Sprintf("matmul|%s|%s|%s|%s", variant, t, ct, out.DType())
	family := "linalg_matmul"
	if _, isVec := vecVariants[variant]; isVec {
		family = "linalg_matmul_vec"
	}
	if isSyn {
		family = "linalg_matmul_syn"
	}
	// c is written through its strides (contiguous columns); the vec4
	// kernels store whole vec4s of an f32 c whose rows are vec4s too.
	ost := out.Strides()
	if ost[len(ost)-1] != 1 && n > 1 {
		return fmt.Errorf("webgpu: matmul output of shape %v has column stride %d; it must be 1", out.Shape(), ost[len(ost)-1])
	}
	outBatch := batchStrides(out, batch)
	vec4Store := (family == "linalg_matmul_vec" || (isSyn && tile.V == 4)) && n%4 == 0 && out.DType() == core.F32 &&
		out.Offset()%4 == 0 && ost[len(ost)-2]%4 == 0 && allMultiplesOf4(outBatch...)
	if vec4Store {
		key += "|v4store"
	}
	expr, extras, also, nOut := "x0", []*core.Tensor(nil), "", 1
	var extraStrides [][]int // each extra's strides over out's shape
	if ep != nil {
		expr, extras = ep.expr, ep.extras
		key += "|" + expr + fmt.Sprintf("|%d", len(extras))
		for _, e := range extras { // which of m and n each extra varies along
			st := lower.BroadcastStrides(e, out.Shape())
			extraStrides = append(extraStrides, st)
			key += fmt.Sprintf("|%t%t", st[len(st)-2] != 0, st[len(st)-1] != 0)
		}
		if ep.also != "" {
			also, nOut = ep.also, 2
			key += "|also|" + also
		}
	}
	colsumBinding := 3 + len(extras) + nOut
	if colsum {
		key += "|colsum"
		nOut++
	}
	p, err := g.pipelineFor(key, 2+len(extras), nOut, func() (string, error) {
		type extra struct {
			I, X, Binding, Slot int
			Rows, Cols          bool // it varies along c's rows, columns
		}
		ex := make([]extra, len(extras))
		for i, st := range extraStrides {
			ex[i] = extra{I: i, X: i + 1, Binding: 3 + i, Slot: wgsl.OperandSlot(2 + i),
				Rows: st[len(st)-2] != 0, Cols: st[len(st)-1] != 0}
		}
		data := map[string]any{"WG": mapWG, "Variant": variant, "T": t, "CT": ct, "Out": ct,
			"Zero": lower.Zero(ct), "Store": storeExpr(out.DType(), "v"), "Extras": ex, "OutBinding": 3 + len(extras),
			"Epilogue": expr, "Also": also, "Vec4Store": vec4Store, "ColSum": colsum, "ColSumBinding": colsumBinding,
			"OutSlot": wgsl.OperandSlot(2 + len(extras))}
		if isSyn {
			tile.templateData(data)
		}
		return wgsl.Render(family, data)
	})
	if err != nil {
		return err
	}
	var prm params
	prm.setI(0, m)
	prm.setI(1, kk)
	prm.setI(2, n)
	as, bs := a.Strides(), b.Strides()
	ra, rb := len(as), len(bs)
	prm.setI(3, as[ra-2])
	prm.setI(4, as[ra-1])
	prm.setI(5, bs[rb-2])
	prm.setI(6, bs[rb-1])
	if len(batch) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: matmul with %d batch dims; at most %d", len(batch), wgsl.MaxRank)
	}
	prm.setI(wgsl.SlotRank, len(batch))
	for i, s := range batch {
		prm.setI(wgsl.SlotShape+i, s)
	}
	writeOperand(&prm, wgsl.OperandSlot(0), a.Offset(), batchStrides(a, batch))
	writeOperand(&prm, wgsl.OperandSlot(1), b.Offset(), batchStrides(b, batch))
	for i, e := range extras {
		slot := wgsl.OperandSlot(2 + i)
		st := extraStrides[i]
		r := len(st)
		writeOperand(&prm, slot, e.Offset(), st[:r-2])
		prm.setI(slot+7, st[r-2])
		prm.setI(slot+8, st[r-1])
	}
	outSlot := wgsl.OperandSlot(2 + len(extras))
	writeOperand(&prm, outSlot, out.Offset(), outBatch)
	prm.setI(outSlot+7, ost[len(ost)-2])
	outs := []*core.Tensor{out}
	if also != "" {
		outs = append(outs, ep.out2)
	}
	if colsum {
		outs = append(outs, ep.colsum)
	}
	bufs, err := buffers(append([]*core.Tensor{a, b}, append(append([]*core.Tensor{}, extras...), outs...)...)...)
	if err != nil {
		return err
	}
	nb := batch.Numel()
	if isSyn {
		prm.setI(wgsl.SlotN, 0)
		return g.runGroups(p, &prm, tile.grid(nb, m, n), bufs...)
	}
	if variant == variantTiled {
		grid := [3]uint32{uint32((n + 15) / 16), uint32((m + 15) / 16), uint32(nb)}
		prm.setI(wgsl.SlotN, 0)
		return g.runGroups(p, &prm, grid, bufs...)
	}
	threads := nb * ((m + 3) / 4) * ((n + 3) / 4)
	if vv, isVec := vecVariants[variant]; isVec {
		threads = nb * ((m + vv.rows - 1) / vv.rows) * ((n + vv.cols - 1) / vv.cols)
	}
	prm.setI(wgsl.SlotN, threads)
	return g.run(p, &prm, threads, mapWG, bufs...)
}

// foldBatchIntoRows views a batched product whose b is one matrix shared by
// every batch entry (x @ w in a linear layer: [B, M, K] @ [K, N]) as one
// product of B*M rows, when a's batch dims step through memory like extra
// rows (and so do the output's and each epilogue operand's). One tall
// product blocks and tunes far better than B short ones.
func foldBatchIntoRows(a, b, out *core.Tensor, batch core.Shape, m int, ep *epilogue) (*core.Tensor, *core.Tensor, *epilogue, bool) {
	if len(batch) == 0 || batch.Numel() <= 1 || b.Rank() != 2 {
		return nil, nil, nil, false
	}
	rows := batch.Numel() * m
	fold := func(t *core.Tensor, st []int, cols int) (*core.Tensor, bool) {
		// st: t's strides over [batch..., M, cols]; rows merge when each dim
		// steps by the next one's stride times its size (or all step 0). t
		// itself may have fewer dims (an epilogue's bias, or a scalar).
		r := len(st)
		rowStride := st[r-2]
		dims := append(append([]int{}, batch...), m)
		for i := len(dims) - 2; i >= 0; i-- {
			if st[i] != st[i+1]*dims[i+1] && !(st[i] == 0 && st[i+1] == 0) {
				return nil, false
			}
		}
		if rowStride == 0 && st[0] != 0 {
			return nil, false
		}
		return core.NewView(t, core.Shape{rows, cols}, []int{rowStride, st[r-1]}, t.Offset()), true
	}
	as := a.Strides()
	ra := len(as)
	fa, ok := fold(a, append(batchStrides(a, batch), as[ra-2], as[ra-1]), a.Shape()[ra-1])
	if !ok {
		return nil, nil, nil, false
	}
	n := out.Shape()[out.Rank()-1]
	fo, ok := fold(out, out.Strides(), n)
	if !ok {
		return nil, nil, nil, false
	}
	if ep == nil {
		return fa, fo, nil, true
	}
	fep := &epilogue{expr: ep.expr, extras: make([]*core.Tensor, len(ep.extras)), also: ep.also}
	if ep.out2 != nil {
		if fep.out2, ok = fold(ep.out2, ep.out2.Strides(), n); !ok {
			return nil, nil, nil, false
		}
	}
	for i, e := range ep.extras {
		if fep.extras[i], ok = fold(e, lower.BroadcastStrides(e, out.Shape()), n); !ok {
			return nil, nil, nil, false
		}
	}
	return fa, fo, fep, true
}

// batchStrides are t's strides over the broadcast batch dims (its last two
// dims are the matrix).
func batchStrides(t *core.Tensor, batch core.Shape) []int {
	sh, st := t.Shape(), t.Strides()
	lead := sh[:len(sh)-2]
	out := make([]int, len(batch))
	off := len(batch) - len(lead)
	for i := range lead {
		if lead[i] != 1 {
			out[off+i] = st[i]
		}
	}
	return out
}

// matmulClass buckets a product by size so one measurement serves similar
// shapes: log2 buckets of M, N and K and whether it is batched.
func matmulClass(batch, m, k, n int) string {
	return fmt.Sprintf("b%d-m%d-k%d-n%d", bucket(batch), bucket(m), bucket(k), bucket(n))
}

func bucket(x int) int {
	b := 0
	for x > 1 {
		x >>= 1
		b++
	}
	return b
}

func init() {
	register("matmul", matmulKernel)
	register("outer", outerKernel)
}

// MatmulVariant computes a @ b with the named kernel variant ("regblock",
// "tiled", or a vec4 one: "regblock4", "nt8", ..., which falls back to
// "regblock" where the operands' layout does not fit it), bypassing the
// tuner: for tests and benchmarks of each variant.
func (g *Backend) MatmulVariant(a, b *core.Tensor, variant string) (*core.Tensor, error) {
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	if d.AVec || d.BVec {
		return nil, fmt.Errorf("webgpu: MatmulVariant takes matrices, got shapes %v and %v", a.Shape(), b.Shape())
	}
	out, err := core.Empty(g, d.Out, a.DType())
	if err != nil {
		return nil, err
	}
	return out, g.matmul(a, b, out, d.Batch, d.M, d.K, d.N, variant)
}

// allMultiplesOf4 says whether every v is a multiple of 4 (an offset or
// stride that keeps vec4s 16-byte aligned).
func allMultiplesOf4(vs ...int) bool {
	for _, v := range vs {
		if v%4 != 0 {
			return false
		}
	}
	return true
}
