package webgpu

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/wgsl"
)

// Segment reductions and CSR products (wgsl/sparse.wgsl): one thread per
// output element loops over the inputs that feed it in the CPU's order, so
// results are deterministic and need no float atomics; float sums carry a
// Kahan compensation to stay near the CPU's f64 accumulation.
//
// Index tensors are data, and a bad id must be an error as on the CPU, so
// the segment reductions and CSR products read their (small) index tensors
// back to the host to validate them. Having them there, the host also
// buckets rows by segment (and CSR entries by column) with a stable
// counting sort and uploads the buckets, so each output thread visits only
// its own rows instead of all of them. That is host work inside a GPU op:
// declared in init (docs/ops.md lists it) and counted per call that does it
// (core.CountHostWork, kind "host" in the fallback report). _segment_gather
// only checks its ids, which it does on the GPU (checkOnDevice).

// spRun dispatches body over n threads with ins and outs bound in order.
func (b *Backend) spRun(ins, outs []*core.Tensor, n int, body string, prm *params) error {
	inT, outT := make([]string, len(ins)), make([]string, len(outs))
	for i, t := range ins {
		inT[i] = physical(t.DType())
	}
	for i, t := range outs {
		outT[i] = physical(t.DType())
	}
	return b.spRunTyped(ins, outs, inT, outT, n, body, prm)
}

// spRunTyped is spRun with the WGSL element type of each binding given
// (vec4<f32> for a buffer read four floats at a time).
func (b *Backend) spRunTyped(ins, outs []*core.Tensor, inT, outT []string, n int, body string, prm *params) error {
	if n == 0 {
		return nil
	}
	key := fmt.Sprintf("sparse|%s|%s|%s", strings.Join(inT, ","), strings.Join(outT, ","), body)
	p, err := b.pipelineFor(key, len(ins), len(outs), func() (string, error) {
		return wgsl.Render("sparse", map[string]any{"WG": mapWG, "Ins": inT, "Outs": outT, "Body": body})
	})
	if err != nil {
		return err
	}
	prm.setI(wgsl.SlotN, n)
	bufs, err := buffers(append(append([]*core.Tensor{}, ins...), outs...)...)
	if err != nil {
		return err
	}
	return b.run(p, prm, n, mapWG, bufs...)
}

// spDesc writes operand k's descriptor (offset and strides of t) and
// returns its first slot for the WGSL body.
func spDesc(p *params, k int, t *core.Tensor) (int, error) {
	if t.Rank() > wgsl.MaxRank {
		return 0, fmt.Errorf("webgpu: a %d-dim operand; the GPU kernels take at most %d dims", t.Rank(), wgsl.MaxRank)
	}
	s := wgsl.OperandSlot(k)
	writeOperand(p, s, t.Offset(), t.Strides())
	return s, nil
}

// spRowShape puts shape in the shape slots for sp_row, its first dim as 1
// (sp_row adds the row itself), and returns the size of a row.
func spRowShape(p *params, shape core.Shape) int {
	p.setI(wgsl.SlotRank, len(shape))
	p.setI(wgsl.SlotShape, 1)
	for i, d := range shape[1:] {
		p.setI(wgsl.SlotShape+1+i, d)
	}
	return shape[1:].Numel()
}

// spInts reads an index tensor back to the host (see the file comment).
func spInts(t *core.Tensor) ([]int, error) {
	v, err := t.Int64s()
	if err != nil {
		return nil, err
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out, nil
}

// spUploadI32 copies vals to the kernel's backend as an i32 tensor.
func spUploadI32(k *core.KernelCall, vals []int) (*core.Tensor, error) {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
	}
	s, err := k.Backend.Upload(core.I32, raw)
	if err != nil {
		return nil, err
	}
	return core.WrapStorage(k.Backend, s, core.Shape{len(vals)}, nil, 0, core.I32), nil
}

// spSegmentIDs reads segment ids to the host and checks them
// (kernelkit.CheckSegmentIDs).
func spSegmentIDs(ids *core.Tensor, segments int, sorted bool) ([]int, error) {
	v, err := spInts(ids)
	if err != nil {
		return nil, err
	}
	if err := kernelkit.CheckSegmentIDs(v, segments, sorted); err != nil {
		return nil, err
	}
	return v, nil
}

// spBuckets is a stable counting sort of items by key in [0, keys): the
// result holds keys+1 starts, then the items of key 0, key 1, ... in their
// original order. Bucket k is result[keys+1+result[k] : keys+1+result[k+1]].
func spBuckets(key []int, keys int) []int {
	out := make([]int, keys+1+len(key))
	for _, c := range key {
		out[c+1]++
	}
	for c := range keys {
		out[c+1] += out[c]
	}
	next := append([]int{}, out[:keys]...)
	for i, c := range key {
		out[keys+1+next[c]] = i
		next[c]++
	}
	return out
}

// spKahan is WGSL that adds term into acc with compensation c (declared by
// the caller); an infinite partial sum drops the compensation, as in
// kahanSum.
func spKahan(acc, term string) string {
	return fmt.Sprintf(`		let ky = (%[2]s) - %[1]s_c;
		let ks = %[1]s + ky;
		%[1]s_c = select((ks - %[1]s) - ky, 0.0, is_inf(ks));
		%[1]s = ks;
`, acc, term)
}

type spSegOp int

const (
	spSegSum spSegOp = iota
	spSegMean
	spSegMax
)

// spSegmentKernel: thread (s, j) reduces element j of the rows of segment s
// in row order; an empty segment gives 0, NaN wins a max.
func spSegmentKernel(op spSegOp) core.Kernel {
	return func(k *core.KernelCall) error {
		data, out := k.Inputs[0], k.Outputs[0]
		segments := k.Attrs.Int("num_segments")
		ids, err := spSegmentIDs(k.Inputs[1], segments, k.Attrs.Bool("sorted"))
		if err != nil {
			return err
		}
		core.CountHostWork(k.Backend.Device(), k.Op.Name)
		var prm params
		inner := spRowShape(&prm, data.Shape())
		d, err := spDesc(&prm, 0, data)
		if err != nil {
			return err
		}
		prm.setN(0, inner)
		ct := physical(data.DType())
		x := fmt.Sprintf("in0[sp_row(u32(in1[pu(1u) + p]), j, %du)]", d)
		sorted := spBuckets(ids, segments)
		starts, items := sorted[:segments+1], sorted[segments+1:]
		b := gpuOf(k)
		size := b.spChunkSize(spLongest(starts), 1+locTrips(data.Rank()))
		if size == 0 {
			buckets, err := spUploadI32(k, sorted)
			if err != nil {
				return err
			}
			defer buckets.Release()
			prm.setN(1, segments+1)
			return b.spRun([]*core.Tensor{data, buckets}, k.Outputs, out.Numel(), spSegmentBody(op, ct, x, out.DType()), &prm)
		}
		// Segments too long for one thread: their chunks first (see
		// kernels_sparse_chunks.go), a mean as a sum.
		chunks, first := spChunks(starts, size)
		buckets, err := spUploadI32(k, append(append([]int{}, chunks...), items...))
		if err != nil {
			return err
		}
		defer buckets.Release()
		prm.setN(1, len(chunks))
		partials, err := b.spPartials(chunks, inner, ct)
		if err != nil {
			return err
		}
		defer partials.Release()
		part := op
		combine := map[spSegOp]spCombineOp{spSegSum: spCombineSum, spSegMean: spCombineMean, spSegMax: spCombineMax}[op]
		if op == spSegMean {
			part = spSegSum
		}
		if err := b.spRun([]*core.Tensor{data, buckets}, []*core.Tensor{partials}, partials.Numel(), spSegmentBody(part, ct, x, partials.DType()), &prm); err != nil {
			return err
		}
		return b.spCombine(k, partials, chunks, first, inner, combine, ct, out)
	}
}

// spSegmentBody is the segment kernel's WGSL: thread t reduces x (over the
// entry p) for element t % pu(0u) of segment t / pu(0u), whose entries are
// in1[s] to in1[s + 1] into out0[t] (of dtype out).
func spSegmentBody(op spSegOp, ct, x string, out core.DType) string {
	count := ""
	if op == spSegMean {
		count = "f32(hi - lo)"
	}
	return spFoldBody(op == spSegMax, count, ct, x, out)
}

// spFoldBody is the WGSL both the segment kernel and spCombine fold with:
// thread t folds x over the entries p from lo = in1[s] to hi = in1[s + 1]
// (s = t / pu(0u), j = t % pu(0u)) into out0[t] of dtype out. isMax takes
// the maximum (NaN wins), else the sum, Kahan-compensated in f32, there
// divided by count (a WGSL f32 of lo and hi; empty for none) for a mean.
func spFoldBody(isMax bool, count, ct, x string, out core.DType) string {
	body := "\tlet s = t / pu(0u);\n\tlet j = t % pu(0u);\n\tlet lo = u32(in1[s]);\n\tlet hi = u32(in1[s + 1u]);\n"
	res := "acc"
	switch {
	case isMax:
		nan := "false"
		if ct == "f32" {
			nan = "is_nan(v)"
		}
		body += fmt.Sprintf("\tvar acc = %s;\n\tfor (var p = lo; p < hi; p++) {\n\t\tlet v = %s;\n\t\tif p == lo || %s || v > acc { acc = v; }\n\t}\n", lower.Zero(ct), x, nan)
	case ct == "f32":
		body += "\tvar acc = 0.0;\n\tvar acc_c = 0.0;\n\tfor (var p = lo; p < hi; p++) {\n" + spKahan("acc", x) + "\t}\n"
		if count != "" {
			res = "select(acc / " + count + ", 0.0, hi == lo)"
		}
	default:
		body += fmt.Sprintf("\tvar acc = %s;\n\tfor (var p = lo; p < hi; p++) { acc += %s; }\n", lower.Zero(ct), x)
	}
	return body + "\tout0[t] = " + storeExpr(out, res) + ";\n"
}

// spSegmentGatherKernel copies row ids[i] of x to row i of the output.
func spSegmentGatherKernel(k *core.KernelCall) error {
	x, idsT, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	rows := x.Shape()[0]
	v := asI32(idsT.DType())
	err := gpuOf(k).checkOnDevice("_segment_gather", idsT, fmt.Sprintf("%s < 0 || %s >= pi(0u)", v, v),
		func(p *params) { p.setI(0, rows) },
		func() error { _, err := spSegmentIDs(idsT, rows, false); return err })
	if err != nil {
		return err
	}
	var prm params
	inner := spRowShape(&prm, x.Shape())
	dx, err := spDesc(&prm, 0, x)
	if err != nil {
		return err
	}
	di, err := spDesc(&prm, 1, idsT)
	if err != nil {
		return err
	}
	prm.setN(0, inner)
	body := fmt.Sprintf("\tlet s = u32(in1[sp_at1(t / pu(0u), %du)]);\n\tout0[t] = %s;\n", di,
		storeExpr(out.DType(), fmt.Sprintf("in0[sp_row(s, t %% pu(0u), %du)]", dx)))
	return gpuOf(k).spRun([]*core.Tensor{x, idsT}, k.Outputs, out.Numel(), body, &prm)
}

// spSegmentMaxGradKernel: element (i, j) gets grad[s, j] / ties when it
// attains its segment's maximum (NaN matching NaN), ties counted over the
// segment's rows; elsewhere 0.
func spSegmentMaxGradKernel(k *core.KernelCall) error {
	data, idsT, maxes, grad, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	segments := maxes.Shape()[0]
	ids, err := spSegmentIDs(idsT, segments, false)
	if err != nil {
		return err
	}
	core.CountHostWork(k.Backend.Device(), k.Op.Name)
	sorted := spBuckets(ids, segments)
	// Each element recounts its segment's ties, a walk over the segment.
	if gpuOf(k).spChunkSize(spLongest(sorted[:segments+1]), 1+locTrips(data.Rank())) > 0 {
		return spSegmentMaxGradLong(k)
	}
	buckets, err := spUploadI32(k, sorted)
	if err != nil {
		return err
	}
	defer buckets.Release()
	var prm params
	inner := spRowShape(&prm, data.Shape())
	var slot [4]int
	for i, t := range []*core.Tensor{data, idsT, maxes, grad} {
		if slot[i], err = spDesc(&prm, i, t); err != nil {
			return err
		}
	}
	prm.setN(0, inner)
	prm.setN(1, segments+1)
	body := fmt.Sprintf(`	let i = t / pu(0u);
	let j = t %% pu(0u);
	let s = u32(in1[sp_at1(i, %[2]du)]);
	let m = in2[sp_row(s, j, %[3]du)];
	let x = in0[sp_row(i, j, %[1]du)];
	var res = 0.0;
	if x == m || (is_nan(x) && is_nan(m)) {
		var ties = 0.0;
		for (var p = u32(in4[s]); p < u32(in4[s + 1u]); p++) {
			let y = in0[sp_row(u32(in4[pu(1u) + p]), j, %[1]du)];
			if y == m || (is_nan(y) && is_nan(m)) { ties += 1.0; }
		}
		res = in3[sp_row(s, j, %[4]du)] / ties;
	}
	out0[t] = %[5]s;
`, slot[0], slot[1], slot[2], slot[3], storeExpr(out.DType(), "res"))
	return gpuOf(k).spRun([]*core.Tensor{data, idsT, maxes, grad, buckets}, k.Outputs, out.Numel(), body, &prm)
}

// spCSR reads a CSR pattern to the host and checks it (kernelkit.CheckCSR).
func spCSR(indptr, indices *core.Tensor, cols int) (ptr, idx []int, err error) {
	if ptr, err = spInts(indptr); err != nil {
		return nil, nil, err
	}
	if idx, err = spInts(indices); err != nil {
		return nil, nil, err
	}
	if err := kernelkit.CheckCSR(ptr, idx, cols); err != nil {
		return nil, nil, err
	}
	return ptr, idx, nil
}

// spCSRDescs writes descriptors for indptr, indices and two more operands.
func spCSRDescs(prm *params, ts ...*core.Tensor) ([]int, error) {
	out := make([]int, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = spDesc(prm, i, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// spSum is WGSL for a compensated f32 sum of term over p in [lo, hi),
// stored to out0[t].
func spSum(lo, hi, pre, term string, out *core.Tensor) string {
	return spAccumulate(lo, hi, pre, term) + "\tout0[t] = " + storeExpr(out.DType(), "acc") + ";\n"
}

// spAccumulate is spSum's loop, leaving the sum in acc.
func spAccumulate(lo, hi, pre, term string) string {
	return fmt.Sprintf("\tvar acc = 0.0;\n\tvar acc_c = 0.0;\n\tfor (var p = %s; p < %s; p++) {\n%s", lo, hi, pre) +
		spKahan("acc", term) + "\t}\n"
}

// spSpmmKernel: thread (r, j) sums values[e] * dense[cols[e], j] over row
// r's entries in order.
func spSpmmKernel(k *core.KernelCall) error {
	indptr, indices, values, dense, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	f, err := checkedCSR("spmm", indptr, indices, dense.Shape()[0])
	if err != nil {
		return err
	}
	b := gpuOf(k)
	if size := b.spmmChunkSize(f, values, dense); size > 0 {
		return b.spmmChunked(k, f.ptr, size, indices, values, dense, out)
	}
	if spmmVec4(values, dense) && out.DType() == core.F32 && out.Offset() == 0 {
		return b.spmmVec4Run(indptr, indices, values, dense, nil, "", out)
	}
	return b.spmmRun(indptr, indices, values, dense, out)
}

// spmmChunkSize is the chunk length rows of structure f need on this
// device (0: none): the vec4 kernel loops over its quads per entry.
func (b *Backend) spmmChunkSize(f *csrFacts, values, dense *core.Tensor) int {
	step := 1
	if spmmVec4(values, dense) {
		step += spmmSpan(dense.Shape()[1] / 4)
	}
	return b.spChunkSize(spLongest(f.ptr), step)
}

// spSpmmTransposedKernel: thread (c, j) sums values[e] * dense[row(e), j]
// over the entries in column c, in entry order (the CPU's order), from the
// host's column buckets: cols+1 starts, the entries, then their rows.
func spSpmmTransposedKernel(k *core.KernelCall) error {
	values, dense, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	cols := k.Attrs.Int("cols")
	f, err := checkedCSR(k.Op.Name, k.Inputs[0], k.Inputs[1], cols)
	if err != nil {
		return err
	}
	buckets, colStarts, err := cscBuckets(k, f, cols)
	if err != nil {
		return err
	}
	nnz := k.Inputs[1].Numel()
	var prm params
	d, err := spCSRDescs(&prm, values, dense)
	if err != nil {
		return err
	}
	n := dense.Shape()[1]
	prm.setN(0, n)
	prm.setN(1, cols+1)
	prm.setN(2, cols+1+nnz)
	term := fmt.Sprintf("in0[sp_at1(e, %du)] * in1[sp_at2(r, j, %du)]", d[0], d[1])
	pre := "\t\tlet e = u32(in2[pu(1u) + p]);\n\t\tlet r = u32(in2[pu(2u) + p]);\n"
	b := gpuOf(k)
	size := b.spChunkSize(spLongest(colStarts), 1)
	if size == 0 {
		body := "\tlet c = t / pu(0u);\n\tlet j = t % pu(0u);\n" + spSum("u32(in2[c])", "u32(in2[c + 1u])", pre, term, out)
		return b.spRun([]*core.Tensor{values, dense, buckets}, k.Outputs, out.Numel(), body, &prm)
	}
	// Columns too long for one thread: their chunks' sums (kernels_kernels_sparse_chunks.go),
	// each chunk's range read from in3.
	chunks, first := spChunks(colStarts, size)
	starts, err := spUploadI32(k, chunks)
	if err != nil {
		return err
	}
	defer starts.Release()
	partials, err := b.spPartials(chunks, n, "f32")
	if err != nil {
		return err
	}
	defer partials.Release()
	body := "\tlet c = t / pu(0u);\n\tlet j = t % pu(0u);\n" + spSum("u32(in3[c])", "u32(in3[c + 1u])", pre, term, partials)
	if err := b.spRun([]*core.Tensor{values, dense, buckets, starts}, []*core.Tensor{partials}, partials.Numel(), body, &prm); err != nil {
		return err
	}
	return b.spCombine(k, partials, chunks, first, n, spCombineSum, "f32", out)
}

// spSddmmKernel: thread e finds its row by binary search in indptr (the
// last row starting at or before e, which skips empty rows) and takes the
// dot product of a's row with b's column.
func spSddmmKernel(k *core.KernelCall) error {
	indptr, indices, a, bm, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	f, err := checkedCSR(k.Op.Name, indptr, indices, bm.Shape()[1])
	if err != nil {
		return err
	}
	ptr := f.ptr
	var prm params
	d, err := spCSRDescs(&prm, indptr, indices, a, bm)
	if err != nil {
		return err
	}
	prm.setN(0, len(ptr)-1)
	prm.setN(1, a.Shape()[1])
	// Each entry's thread searches its row, then walks the inner dim.
	search := bits.Len(uint(len(ptr))) + 2
	if err := gpuOf(k).checkTrips(fmt.Sprintf("sddmm over an inner dim of %d", a.Shape()[1]), search+a.Shape()[1]+16); err != nil {
		return err
	}
	body := fmt.Sprintf(`	var lo = 0u;
	var hi = pu(0u);
	loop {
		if hi - lo <= 1u { break; }
		let mid = (lo + hi) / 2u;
		if u32(in0[sp_at1(mid, %[1]du)]) <= t { lo = mid; } else { hi = mid; }
	}
	let c = u32(in1[sp_at1(t, %[2]du)]);
`, d[0], d[1]) + spSum("0u", "pu(1u)", "", fmt.Sprintf("in2[sp_at2(lo, p, %du)] * in3[sp_at2(p, c, %du)]", d[2], d[3]), out)
	return gpuOf(k).spRun(k.Inputs, k.Outputs, out.Numel(), body, &prm)
}

func init() {
	const buckets = "reads segment_ids back to check them and groups the rows by segment with a counting sort, uploading the groups (each call)"
	const csr = "reads indptr and indices back to check the CSR structure, once per structure (remembered while the tensors live)"
	for _, op := range []string{"segment_sum", "segment_mean", "segment_max", "_segment_max_grad"} {
		core.DeclareHostWork("webgpu", op, buckets)
	}
	core.DeclareHostWork("webgpu", "spmm", csr+"; fused spmm nodes of a compiled graph too")
	core.DeclareHostWork("webgpu", "sddmm", csr)
	core.DeclareHostWork("webgpu", "_spmm_transposed", csr+", and groups the entries by column there, uploading the groups (once per structure)")
	register("segment_sum", spSegmentKernel(spSegSum))
	register("segment_mean", spSegmentKernel(spSegMean))
	register("segment_max", spSegmentKernel(spSegMax))
	register("_segment_gather", spSegmentGatherKernel)
	register("_segment_max_grad", spSegmentMaxGradKernel)
	register("spmm", spSpmmKernel)
	register("_spmm_transposed", spSpmmTransposedKernel)
	register("sddmm", spSddmmKernel)
}
