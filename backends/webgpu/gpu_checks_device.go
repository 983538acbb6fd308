package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Checks of an op's data (indices in range, probabilities in [0, 1]) run
// on the GPU: a map kernel over the checked tensor marks a flag where the
// condition fails, and only that one word comes back, instead of the whole
// tensor for the host to scan. Reading the data back was host work inside
// a GPU op (issue 19): an embedding lookup copied every index to the host
// on every call. The tensor is read back only when the flag is set, to word
// the error as the CPU does (the first bad element, its value).

// checkOnDevice fails op when bad holds for some element of t. bad is WGSL
// over x0, the element in its physical type (physical), and the scalar
// slots set fills; explain returns the error, reading t back if it must.
// Like validate, the flag is read at once where the caller may block and
// at the next read in the browser.
func (b *Backend) checkOnDevice(op string, t *core.Tensor, bad string, set func(*params), explain func() error) error {
	if t.Numel() == 0 {
		return nil
	}
	flag, err := b.newFlag()
	if err != nil {
		return err
	}
	// The map kernel needs an output the size of t; it is written with
	// zeros and dropped, the flag being the result.
	scratch, err := core.Empty(b, t.Shape(), core.I32)
	if err != nil {
		flag.Release()
		return err
	}
	guard := fmt.Sprintf("\tif %s { atomicOr(&flag[0], 1u); }\n", bad)
	err = b.mapRunWG([]*core.Tensor{t}, scratch, "0", guard, flag, set, mapWG)
	scratch.Release()
	if err != nil {
		flag.Release()
		return err
	}
	return validate(op, func() error {
		defer flag.Release()
		v, err := flag.Int64s()
		if err != nil || v[0] == 0 {
			return err
		}
		if err := explain(); err != nil {
			return err
		}
		return fmt.Errorf("%s: the device check %q failed, yet the values read back pass it (please report)", op, bad)
	})
}

// asI32 is x0 of dtype d as an i32 for index checks: unsigned values past
// the i32 range become negative, which every index check refuses (explain
// then names the true value).
func asI32(d core.DType) string {
	if physical(d) == "u32" {
		return "bitcast<i32>(x0)"
	}
	return "x0"
}
