package oprules

import (
	"fmt"
	"math"
)

// Ranges: arange's length and elements, exact in int64 for integer bounds.

// arangeLength is the number of elements of arange(start, stop, step), with
// PyTorch's rule ceil((stop-start)/step).
func arangeLength(start, stop, step float64) (int, error) {
	if math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(stop) || math.IsInf(stop, 0) {
		return 0, fmt.Errorf("start %v and stop %v must be finite", start, stop)
	}
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		return 0, fmt.Errorf("step must be finite and non-zero, got %v", step)
	}
	if (stop-start)*step < 0 {
		return 0, fmt.Errorf("step %v goes away from stop: start %v, stop %v", step, start, stop)
	}
	n := math.Ceil((stop - start) / step)
	if n > maxArange {
		return 0, fmt.Errorf("arange(%v, %v, %v) has too many elements (%v)", start, stop, step, n)
	}
	return int(n), nil
}

const maxArange = math.MaxInt32 * 64

// ArangeInts returns arange's start and step as integers, and true, when
// start, stop and step are all integers: given as ints (kept exactly, see
// AttrSpec.KeepInt) or as floats holding integers of at most 2^53. Such a
// range is computed in int64, exactly; any other in float64.
func ArangeInts(a Attrs) (start, step int64, ok bool) {
	s, ok1 := exactInt(a, "start")
	_, ok2 := exactInt(a, "stop")
	d, ok3 := exactInt(a, "step")
	return s, d, ok1 && ok2 && ok3
}

func exactInt(a Attrs, name string) (int64, bool) {
	if i, ok := a.IntValue(name); ok {
		return int64(i), true
	}
	f := a.Float(name)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// arangeIntLength is arangeLength in exact integer arithmetic: stop-start
// may not fit an int64 (arange(-2^63, 2^63-1)), but its magnitude fits a
// uint64.
func arangeIntLength(start, stop, step int64) (int, error) {
	if step == 0 {
		return 0, fmt.Errorf("step must be non-zero")
	}
	if (step > 0 && stop < start) || (step < 0 && stop > start) {
		return 0, fmt.Errorf("step %d goes away from stop: start %d, stop %d", step, start, stop)
	}
	span, mag := uint64(stop)-uint64(start), uint64(step)
	if step < 0 {
		span, mag = uint64(start)-uint64(stop), -uint64(step)
	}
	n := span / mag
	if span%mag != 0 {
		n++
	}
	if n > maxArange {
		return 0, fmt.Errorf("arange(%d, %d, %d) has too many elements (%d)", start, stop, step, n)
	}
	return int(n), nil
}

// ArangeAt is element i of an integer arange: computed in wrapping
// arithmetic, which is exact because the value lies between start and stop.
func ArangeAt(start, step int64, i int) int64 {
	return int64(uint64(start) + uint64(i)*uint64(step))
}

// ArangeLen is the number of elements of arange for a's start, stop and
// step: PyTorch's ceil((stop-start)/step), computed exactly in int64 when
// ArangeInts holds and in float64 otherwise.
func ArangeLen(a Attrs) (int, error) {
	start, step, ints := ArangeInts(a)
	if !ints {
		return arangeLength(a.Float("start"), a.Float("stop"), a.Float("step"))
	}
	stop, _ := exactInt(a, "stop")
	return arangeIntLength(start, stop, step)
}
