package cpu

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// A u64 travels the integer paths as its int64 bit pattern (core.U64):
// the modular arithmetic and bitwise kernels need nothing more, the
// elementwise ones that order, divide or shift take binaryFns.u and
// unaryFns.u, and the reductions and searches that compare int64 values
// (max, argmax, segment_max, max_pool2d, sort) run on u64Key of each
// value instead, through unsignedOrder, which is one wrapper rather than a
// uint64 twin of every such kernel.

// u64Key maps a u64 carried as int64 to an int64 with the same order:
// flipping the top bit moves [2^63, 2^64) above [0, 2^63). It is its own
// inverse.
func u64Key(v int64) int64 { return v ^ math.MinInt64 }

// unsignedOrder runs k on u64Key of its u64 inputs (the positions in ins)
// held as i64, and writes u64Key of its i64 results back into the u64
// outputs at the positions in outs; other inputs and outputs (indices)
// pass as they are. Without a u64 input it is k. keep says for which calls
// it applies (nil: all), so a kernel that also sums, say, runs its other
// modes on the bits unchanged. k must not be a Dynamic op's kernel (its
// outputs are allocated here).
func unsignedOrder(k core.Kernel, keep func(core.Attrs) bool, ins, outs []int) core.Kernel {
	return func(kc *core.KernelCall) error {
		if !hasU64(kc.Inputs, ins) || (keep != nil && !keep(kc.Attrs)) {
			return k(kc)
		}
		inner := *kc
		inner.Inputs = slices.Clone(kc.Inputs)
		for _, j := range ins {
			if t := kc.Inputs[j]; t != nil && t.DType().IsUnsigned64() {
				keyed, err := keyedCopy(kc, t)
				if err != nil {
					return err
				}
				inner.Inputs[j] = keyed
			}
		}
		inner.Outputs = slices.Clone(kc.Outputs)
		for _, j := range outs {
			if t := kc.Outputs[j]; t.DType().IsUnsigned64() {
				tmp, err := kc.Alloc(t.Shape(), core.I64)
				if err != nil {
					return err
				}
				inner.Outputs[j] = tmp
			}
		}
		if err := k(&inner); err != nil {
			return err
		}
		for _, j := range outs {
			if kc.Outputs[j].DType().IsUnsigned64() {
				v := readI64(inner.Outputs[j])
				for i, x := range v {
					v[i] = u64Key(x)
				}
				writeI64(kc.Outputs[j], v)
			}
		}
		return nil
	}
}

// keyedCopy is a contiguous i64 tensor of u64Key of t's values.
func keyedCopy(kc *core.KernelCall, t *core.Tensor) (*core.Tensor, error) {
	keyed, err := kc.Alloc(t.Shape(), core.I64)
	if err != nil {
		return nil, err
	}
	v := readI64(t)
	for i, x := range v {
		v[i] = u64Key(x)
	}
	writeI64(keyed, v)
	return keyed, nil
}

// hasU64 reports whether an input at one of the positions is u64.
func hasU64(ts []*core.Tensor, at []int) bool {
	for _, j := range at {
		if j < len(ts) && ts[j] != nil && ts[j].DType().IsUnsigned64() {
			return true
		}
	}
	return false
}
