"""Reference functions for scaled dot-product attention and its gradient
(core/ops_attention.go), by PyTorch and its autograd.
"""

import torch
import torch.nn.functional as F

from ._util import grads_of


def attention(ins, a):
    q, k, v, m = (ins + [None])[:4]
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask=m, is_causal=a.get("is_causal", False), scale=a.get("scale")
    )


def attention_backward(ins, a):
    """Gradients with q, k, v (and a float mask) expanded to the broadcast
    batch shape, which is what the backward op returns before autograd sums
    them back to each input's shape."""
    q, k, v, g, m = (ins + [None])[:5]
    batch = list(torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    q, k, v = (t.expand(batch + list(t.shape[-2:])) for t in (q, k, v))
    leaves = [q, k, v]
    if m is not None and m.is_floating_point():
        leaves.append(m.expand(batch + [q.shape[-2], k.shape[-2]]))

    def fn(q, k, v, mask=m):
        return attention([q, k, v, mask], a)
    return grads_of(fn, [g], leaves)


REFS = {
    "scaled_dot_product_attention": attention,
    "_scaled_dot_product_attention_backward": attention_backward,
}
