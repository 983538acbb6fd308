package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// The sparse kernels' threads each walk one key's range of entries: a
// segment's rows, a CSR row, a CSC column. A graph whose hub has 70,000
// neighbours, or a readout summing every node into one segment, walks
// past a software driver's loop limit (gpu_looplimit.go), and the sums came out
// wrong without an error. Where the longest range would, the ranges are
// cut into chunks of at most half the limit: the kernel runs over the
// chunks as if they were keys, writing a partial per chunk and column, and
// a second launch combines each key's partials in order (a compensated sum,
// or a maximum). The host has the ranges already: it reads the index
// tensors back to check them.

// spLongest is the length of the longest range of starts (keys+1 ascending
// offsets).
func spLongest(starts []int) int {
	n := 0
	for k := 0; k+1 < len(starts); k++ {
		n = max(n, starts[k+1]-starts[k])
	}
	return n
}

// spChunks cuts every range of starts into chunks of at most size entries:
// chunk c covers [chunks[c], chunks[c+1]) and key k owns chunks
// [first[k], first[k+1]) (none for an empty range).
func spChunks(starts []int, size int) (chunks, first []int) {
	first = make([]int, len(starts))
	for k := 0; k+1 < len(starts); k++ {
		first[k] = len(chunks)
		for at := starts[k]; at < starts[k+1]; at += size {
			chunks = append(chunks, at)
		}
	}
	first[len(starts)-1] = len(chunks)
	return append(chunks, starts[len(starts)-1]), first
}

// spChunkSize is the chunk length for threads that loop step times per
// entry, or 0 when the device needs no chunks for ranges of longest.
func (b *Backend) spChunkSize(longest, step int) int {
	if b.loopsFit(longest*step + 64) {
		return 0
	}
	return max(b.loopLimit()/2/step, 1)
}

// spCombineOp is how spCombine folds a key's partials.
type spCombineOp int

const (
	spCombineSum  spCombineOp = iota
	spCombineMean             // the sum over the key's entry count
	spCombineMax              // NaN wins, as in the segment max
)

// spCombine writes out[k, j] (keys x inner, a fresh tensor) from
// partials[c, j] (compute type ct) over each key's chunks, chunks and first
// as spChunks made them.
func (b *Backend) spCombine(k *core.KernelCall, partials *core.Tensor, chunks, first []int, inner int, op spCombineOp, ct string, out *core.Tensor) error {
	keys := len(first) - 1
	perKey := 0
	for i := range keys {
		perKey = max(perKey, first[i+1]-first[i])
	}
	if err := b.checkTrips(fmt.Sprintf("combining %d chunks of one key's entries", perKey), perKey+64); err != nil {
		return err
	}
	index, err := spUploadI32(k, append(append([]int{}, first...), chunks...))
	if err != nil {
		return err
	}
	defer index.Release()
	var prm params
	prm.setN(0, inner)
	prm.setN(1, keys+1)
	count := ""
	if op == spCombineMean {
		count = "f32(in1[pu(1u) + hi] - in1[pu(1u) + lo])"
	}
	body := spFoldBody(op == spCombineMax, count, ct, "in0[p * pu(0u) + j]", out.DType())
	return b.spRun([]*core.Tensor{partials, index}, []*core.Tensor{out}, out.Numel(), body, &prm)
}

// spPartials is a fresh tensor of chunks x inner partials of compute type
// ct.
func (b *Backend) spPartials(chunks []int, inner int, ct string) (*core.Tensor, error) {
	return core.Empty(b, core.Shape{(len(chunks) - 1) * inner}, dtypeOf(ct))
}

// spmmChunked is spmm over rows too long for one thread: the scalar
// kernel over row chunks (chunk starts in place of indptr), then their
// sums.
func (b *Backend) spmmChunked(k *core.KernelCall, ptr []int, size int, indices, values, dense, out *core.Tensor) error {
	chunks, first := spChunks(ptr, size)
	starts, err := spUploadI32(k, chunks)
	if err != nil {
		return err
	}
	defer starts.Release()
	n := dense.Shape()[1]
	partials, err := b.spPartials(chunks, n, "f32")
	if err != nil {
		return err
	}
	defer partials.Release()
	if err := b.spmmRun(starts, indices, values, dense, partials); err != nil {
		return err
	}
	return b.spCombine(k, partials, chunks, first, n, spCombineSum, "f32", out)
}

// spmmRun is the scalar spmm kernel: thread (r, j) of out (rows of indptr
// by dense's columns, fresh) sums row r's entries in order.
func (b *Backend) spmmRun(indptr, indices, values, dense, out *core.Tensor) error {
	var prm params
	d, err := spCSRDescs(&prm, indptr, indices, values, dense)
	if err != nil {
		return err
	}
	prm.setN(0, dense.Shape()[1])
	body := "\tlet r = t / pu(0u);\n\tlet j = t % pu(0u);\n" + spSum(
		fmt.Sprintf("u32(in0[sp_at1(r, %du)])", d[0]), fmt.Sprintf("u32(in0[sp_at1(r + 1u, %du)])", d[0]),
		fmt.Sprintf("\t\tlet c = u32(in1[sp_at1(p, %du)]);\n", d[1]),
		fmt.Sprintf("in2[sp_at1(p, %du)] * in3[sp_at2(c, j, %du)]", d[2], d[3]), out)
	return b.spRun([]*core.Tensor{indptr, indices, values, dense}, []*core.Tensor{out}, out.Numel(), body, &prm)
}

// spSegmentMaxGradLong is _segment_max_grad for segments too long for
// each element to count its segment's ties: the ties are a segment sum
// (chunked as it needs) of where each row attains its segment's maximum,
// and each row then takes its segment's grad / ties where it does.
func spSegmentMaxGradLong(k *core.KernelCall) error {
	data, ids, maxes, grad, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	b := gpuOf(k)
	const attains = "select(0.0, 1.0, x0 == x1 || (is_nan(x0) && is_nan(x1)))"
	rowMax := core.Call1("_segment_gather", nil, maxes, ids)
	defer rowMax.Release()
	hits, err := core.Empty(b, data.Shape(), core.F32)
	if err != nil {
		return err
	}
	defer hits.Release()
	if err := rowMax.Err(); err != nil {
		return err
	}
	if err := b.mapRun([]*core.Tensor{data, rowMax}, hits, attains, nil); err != nil {
		return err
	}
	ties := core.Call1("segment_sum", core.Attrs{"num_segments": maxes.Shape()[0]}, hits, ids)
	defer ties.Release()
	share := core.Call1("div", nil, grad, ties)
	defer share.Release()
	rowShare := core.Call1("_segment_gather", nil, share, ids)
	defer rowShare.Release()
	if err := rowShare.Err(); err != nil {
		return err
	}
	return b.mapRun([]*core.Tensor{data, rowMax, rowShare}, out, "select(0.0, x2, "+attains+" != 0.0)", nil)
}
