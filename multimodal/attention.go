package multimodal

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// mergedHeads is multi-head attention of q, k, v [B, H, L, E] with its
// heads merged back, [B, L, H·Ev]: the layout the output projection reads.
// Where nothing records gradients and the device's backend can write each
// head's output in place (fusion.AttentionTransposer: the CPU, WebGPU), it
// does, and the merge is a view; otherwise the output [B, H, L, Ev] is
// permuted and the merge copies it (a twentieth of a MiniLM forward on the
// CPU).
func mergedHeads(q, k, v, mask *core.Tensor, attrs core.Attrs) *core.Tensor {
	s := q.Shape()
	// A tracer would not see the backend's call: it gets the op calls.
	if len(s) == 4 && !core.Tracing() && !(core.GradEnabled() && (q.RequiresGrad() || k.RequiresGrad() || v.RequiresGrad())) {
		if b, err := core.BackendFor(q.Device()); err == nil {
			if at, ok := b.(fusion.AttentionTransposer); ok {
				if out, err := at.AttentionTransposed(q, k, v, mask, attrs); err == nil {
					o := out.Shape()
					return out.Reshape(core.Shape{o[0], o[1], o[2] * o[3]})
				}
			}
		}
	}
	o := q.ScaledDotProductAttention(k, v, mask, attrs)
	if o.Err() != nil {
		return o
	}
	os := o.Shape()
	return o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{os[0], os[2], os[1] * os[3]})
}
