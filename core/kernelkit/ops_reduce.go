package kernelkit

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// ArgReduceAxes resolves argmax/argmin's "axis" for a kernel: the axis,
// whether the search is over the flattened tensor (no axis, or a scalar),
// and the axes the kernel reduces: that axis, or all of them when flat.
func ArgReduceAxes(rank int, a core.Attrs) (axis int, axes []int, flat bool, err error) {
	axis, flat, err = oprules.ArgReduceAxis(rank, a)
	if err != nil {
		return 0, nil, false, err
	}
	flat = flat || rank == 0
	if !flat {
		return axis, []int{axis}, false, nil
	}
	axes = make([]int, rank)
	for d := range axes {
		axes[d] = d
	}
	return axis, axes, true, nil
}
