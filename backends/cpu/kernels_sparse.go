package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// Segment reductions (the CSR products are in kernels_sparse_csr.go). Ids are
// checked here, not in Infer, because they are data: an id out of range is
// an error naming the entry.

func init() {
	register("segment_sum", segmentKernel(segmentSumOp))
	register("segment_mean", segmentKernel(segmentMeanOp))
	register("segment_max", segmentKernel(segmentMaxOp))
	register("_segment_gather", segmentGatherKernel)
	register("_segment_max_grad", segmentMaxGradKernel)
}

type segmentOp int

const (
	segmentSumOp segmentOp = iota
	segmentMeanOp
	segmentMaxOp
)

// segmentIDs reads the ids and checks them (kernelkit.CheckSegmentIDs): in
// range and, with sorted set, never decreasing, as the caller promised.
func segmentIDs(ids *core.Tensor, segments int, sorted bool) ([]int, error) {
	v := readInts(ids)
	if err := kernelkit.CheckSegmentIDs(v, segments, sorted); err != nil {
		return nil, err
	}
	return v, nil
}

// segmentRuns returns, for non-decreasing ids, where each segment starts:
// rows starts[s]..starts[s+1]-1 belong to segment s.
func segmentRuns(ids []int, segments int) []int {
	starts := make([]int, segments+1)
	for _, s := range ids {
		starts[s+1]++
	}
	for s := 0; s < segments; s++ {
		starts[s+1] += starts[s]
	}
	return starts
}

// segmentKernel reduces rows of data into segments. Sorted ids are reduced
// one segment per task in parallel (no two tasks share an output row);
// otherwise rows are visited in order and the inner dim is split instead.
func segmentKernel(op segmentOp) core.Kernel {
	return func(k *core.KernelCall) error {
		data, out := k.Inputs[0], k.Outputs[0]
		segments := k.Attrs.Int("num_segments")
		ids, err := segmentIDs(k.Inputs[1], segments, k.Attrs.Bool("sorted"))
		if err != nil {
			return err
		}
		inner := data.Shape()[1:].Numel()
		if !data.DType().IsFloat() {
			writeI64(out, segmentReduceInt(readI64(data), ids, segments, inner, op, data.DType().IsUnsigned64()))
			return nil
		}
		x := readF64(data)
		acc := tempF64(segments * inner)
		count, firstRow := make([]int, segments), make([]int, segments)
		for row, s := range ids {
			if count[s] == 0 {
				firstRow[s] = row
			}
			count[s]++
		}
		reduceRow := func(row, s, lo, hi int) {
			dst, src := acc[s*inner:(s+1)*inner], x[row*inner:(row+1)*inner]
			first := row == firstRow[s]
			for j := lo; j < hi; j++ {
				dst[j] = segmentStep(op, dst[j], src[j], first)
			}
		}
		if k.Attrs.Bool("sorted") {
			starts := segmentRuns(ids, segments)
			parallelFor(segments, max(1, inner*len(ids)/max(1, segments)), func(lo, hi int) {
				for s := lo; s < hi; s++ {
					for row := starts[s]; row < starts[s+1]; row++ {
						reduceRow(row, s, 0, inner)
					}
				}
			})
		} else {
			parallelFor(inner, len(ids), func(lo, hi int) {
				for row, s := range ids {
					reduceRow(row, s, lo, hi)
				}
			})
		}
		if op == segmentMeanOp {
			for s, c := range count {
				for j := 0; j < inner && c > 0; j++ {
					acc[s*inner+j] /= float64(c)
				}
			}
		}
		writeF64(out, acc)
		return nil
	}
}

// segmentStep folds v into acc. The first row of a segment replaces the
// zero the output starts from; NaN wins over everything, like torch amax.
func segmentStep(op segmentOp, acc, v float64, first bool) float64 {
	if op != segmentMaxOp {
		return acc + v
	}
	if first || v != v || v > acc {
		return v
	}
	return acc
}

// segmentReduceInt sums (wrapping) or takes maxima of integer rows; a u64
// (unsigned) compares as uint64, its empty segments still 0.
func segmentReduceInt(x []int64, ids []int, segments, inner int, op segmentOp, unsigned bool) []int64 {
	acc := tempI64(segments * inner)
	seen := make([]bool, segments)
	for row, s := range ids {
		dst, src := acc[s*inner:(s+1)*inner], x[row*inner:(row+1)*inner]
		for j := range dst {
			switch {
			case op != segmentMaxOp:
				dst[j] += src[j]
			case !seen[s] || (unsigned && uint64(src[j]) > uint64(dst[j])) || (!unsigned && src[j] > dst[j]):
				dst[j] = src[j]
			}
		}
		seen[s] = true
	}
	return acc
}

func segmentGatherKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	ids, err := segmentIDs(k.Inputs[1], x.Shape()[0], false)
	if err != nil {
		return err
	}
	inner := x.Shape()[1:].Numel()
	if !x.DType().IsFloat() {
		src := readI64(x)
		dst := tempI64(len(ids) * inner)
		for row, s := range ids {
			copy(dst[row*inner:(row+1)*inner], src[s*inner:(s+1)*inner])
		}
		writeI64(out, dst)
		return nil
	}
	src := readF64(x)
	dst := tempF64(len(ids) * inner)
	for row, s := range ids {
		copy(dst[row*inner:(row+1)*inner], src[s*inner:(s+1)*inner])
	}
	writeF64(out, dst)
	return nil
}

// segmentMaxGradKernel shares each segment's gradient evenly among the rows
// that attain its maximum (NaN matches NaN), as torch's amax backward does.
func segmentMaxGradKernel(k *core.KernelCall) error {
	data, maxes, grad, out := k.Inputs[0], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	segments := maxes.Shape()[0]
	ids, err := segmentIDs(k.Inputs[1], segments, false)
	if err != nil {
		return err
	}
	inner := data.Shape()[1:].Numel()
	x, m, g := readF64(data), readF64(maxes), readF64(grad)
	ties := tempF64(segments * inner)
	hit := func(row, s, j int) bool {
		a, b := x[row*inner+j], m[s*inner+j]
		return a == b || (a != a && b != b)
	}
	for row, s := range ids {
		for j := 0; j < inner; j++ {
			if hit(row, s, j) {
				ties[s*inner+j]++
			}
		}
	}
	res := tempF64(len(x))
	for row, s := range ids {
		for j := 0; j < inner; j++ {
			if hit(row, s, j) {
				res[row*inner+j] = g[s*inner+j] / ties[s*inner+j]
			}
		}
	}
	writeF64(out, res)
	return nil
}
