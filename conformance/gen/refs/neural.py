"""Reference functions for the neural-network ops: softmax family, dropout,
normalisation, attention and losses (core/ops_nn.go, ops_norm.go,
ops_attention.go, ops_loss.go).

Every reference is a PyTorch call except dropout's mask: torch does not use
our counter-based RNG, so the mask is re-derived here with Philox4x32-10
exactly as core/rng.go documents it.
"""

import warnings

import numpy as np
import torch
import torch.nn.functional as F

_MASK32 = np.uint64(0xFFFFFFFF)
_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_W = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))


def philox4x32(key, ctr):
    """Ten rounds of Philox4x32 on arrays of 32-bit words held in uint64."""
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in ctr)
    for r in range(10):
        if r > 0:
            k0 = (k0 + _PHILOX_W[0]) & _MASK32
            k1 = (k1 + _PHILOX_W[1]) & _MASK32
        p0 = _PHILOX_M[0] * c0
        p1 = _PHILOX_M[1] * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & _MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _MASK32)
    return c0, c1, c2, c3


def philox_uniform(seed, offset, n):
    """Element i's uniform in [0, 1): block offset + i//4, lane i%4, stream 0, 24 bits."""
    seed &= (1 << 64) - 1
    i = np.arange(n, dtype=np.uint64)
    block = np.uint64(offset) + i // np.uint64(4)
    zeros = np.zeros(n, dtype=np.uint64)
    lanes = philox4x32((seed & 0xFFFFFFFF, seed >> 32), (block & _MASK32, block >> np.uint64(32), zeros, zeros))
    bits = np.choose((i % np.uint64(4)).astype(np.int64), lanes)
    return (bits >> np.uint64(8)).astype(np.float64) * 2.0 ** -24


def dropout(ins, a):
    x, p = ins[0], a.get("p", 0.5)
    if not a.get("training", True) or p == 0:
        return F.dropout(x, p, training=False)
    if p == 1:
        return F.dropout(x, 1.0, training=True)
    u = torch.from_numpy(philox_uniform(a["seed"], a["offset"], x.numel())).reshape(x.shape)
    keep = (u >= p).to(x.dtype)
    return x * keep * (1.0 / (1.0 - p))


def softmax(ins, a):
    return torch.softmax(ins[0], a.get("axis", -1))


def log_softmax(ins, a):
    return torch.log_softmax(ins[0], a.get("axis", -1))


def softmax_backward(ins, a):
    y, g = ins
    return torch._softmax_backward_data(g, y, a.get("axis", -1) % y.dim(), y.dtype)


def log_softmax_backward(ins, a):
    y, g = ins
    return torch._log_softmax_backward_data(g, y, a.get("axis", -1) % y.dim(), y.dtype)


def grads_of(fn, upstream, inputs):
    """Gradients of fn(*inputs) (one tensor or a tuple) for upstream
    gradients (None where none flows), by torch autograd."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    outs = fn(*leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, u) for o, u in zip(outs, upstream, strict=False) if u is not None and o.requires_grad]
    return torch.autograd.grad([o for o, _ in pairs], leaves, [u for _, u in pairs], allow_unused=True)


def params_or_default(w, b, shape, like):
    """Weight and bias for gradient references: ones and zeros when absent,
    so their gradients are those of the unit affine map."""
    w = torch.ones(shape, dtype=like.dtype) if w is None else w
    b = torch.zeros(shape, dtype=like.dtype) if b is None else b
    return w, b


def layer_norm(ins, a):
    x, w, b = (ins + [None, None])[:3]
    return F.layer_norm(x, a["normalized_shape"], w, b, a.get("eps", 1e-5))


def layer_norm_backward(ins, a):
    x, g, w = (ins + [None])[:3]
    ns = a["normalized_shape"]
    w, b = params_or_default(w, None, ns, x)
    return grads_of(lambda x, w, b: F.layer_norm(x, ns, w, b, a.get("eps", 1e-5)), [g], [x, w, b])


def rms_norm(ins, a):
    x, w = (ins + [None])[:2]
    return F.rms_norm(x, a["normalized_shape"], w, a.get("eps"))


def rms_norm_backward(ins, a):
    x, g, w = (ins + [None])[:3]
    ns = a["normalized_shape"]
    w, _ = params_or_default(w, None, ns, x)
    return grads_of(lambda x, w: F.rms_norm(x, ns, w, a.get("eps")), [g], [x, w])


def group_norm(ins, a):
    x, w, b = (ins + [None, None])[:3]
    return F.group_norm(x, a["num_groups"], w, b, a.get("eps", 1e-5))


def group_norm_backward(ins, a):
    x, g, w = (ins + [None])[:3]
    w, b = params_or_default(w, None, [x.shape[1]], x)
    return grads_of(lambda x, w, b: F.group_norm(x, a["num_groups"], w, b, a.get("eps", 1e-5)), [g], [x, w, b])


def batch_norm(ins, a):
    """y from F.batch_norm; the updated running statistics as differentiable
    torch expressions (torch updates its buffers in place, outside autograd),
    checked against the buffers F.batch_norm updated."""
    x, rm, rv, w, b = (ins + [None] * 4)[:5]
    training, momentum, eps = a.get("training", False), a.get("momentum", 0.1), a.get("eps", 1e-5)
    if not training:
        return F.batch_norm(x, rm, rv, w, b, False, momentum, eps), rm.clone(), rv.clone()
    bm = None if rm is None else rm.detach().clone()
    bv = None if rv is None else rv.detach().clone()
    y = F.batch_norm(x, bm, bv, w, b, True, momentum, eps)
    dims = [0] + list(range(2, x.dim()))
    mean, var = x.mean(dims), x.var(dims)
    if rm is None:
        return y, mean, var
    new_mean, new_var = torch.lerp(rm, mean, momentum), torch.lerp(rv, var, momentum)
    torch.testing.assert_close(new_mean.detach(), bm)
    torch.testing.assert_close(new_var.detach(), bv)
    return y, new_mean, new_var


def batch_norm_backward(ins, a):
    x, g, rm, rv, w, gm, gv = (ins + [None] * 5)[:7]
    w, b = params_or_default(w, None, [x.shape[1]], x)
    return grads_of(lambda x, w, b: batch_norm([x, rm, rv, w, b], a), [g, gm, gv], [x, w, b])


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


def class_loss_args(a, nll=False):
    args = {"reduction": a.get("reduction", "mean"), "ignore_index": a.get("ignore_index", -100)}
    if not nll:
        args["label_smoothing"] = a.get("label_smoothing", 0.0)
    return args


def as_target(t):
    return t if t.is_floating_point() else t.long()


def cross_entropy(ins, a):
    x, t, w = (ins + [None])[:3]
    return F.cross_entropy(x, as_target(t), weight=w, **class_loss_args(a))


def cross_entropy_backward(ins, a):
    x, t, g, w = (ins + [None])[:4]
    if t.is_floating_point():
        return grads_of(lambda x, t: cross_entropy([x, t, w], a), [g], [x, t])
    return grads_of(lambda x: cross_entropy([x, t, w], a), [g], [x])


def nll_loss(ins, a):
    x, t, w = (ins + [None])[:3]
    return F.nll_loss(x, t.long(), weight=w, **class_loss_args(a, nll=True))


def nll_loss_backward(ins, a):
    x, t, g, w = (ins + [None])[:4]
    return grads_of(lambda x: nll_loss([x, t, w], a), [g], [x])


POINTWISE_LOSSES = {
    "mse_loss": lambda x, t, a: F.mse_loss(x, t, reduction=a.get("reduction", "mean")),
    "l1_loss": lambda x, t, a: F.l1_loss(x, t, reduction=a.get("reduction", "mean")),
    "smooth_l1_loss": lambda x, t, a: F.smooth_l1_loss(
        x, t, reduction=a.get("reduction", "mean"), beta=a.get("beta", 1.0)
    ),
}


def pointwise_loss(name):
    def ref(ins, a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that input and target broadcast
            return POINTWISE_LOSSES[name](ins[0], ins[1], a)
    return ref


def pointwise_loss_backward(ins, a):
    x, t, g = ins
    shape = torch.broadcast_shapes(x.shape, t.shape)
    fn = pointwise_loss(a["loss"])
    return grads_of(lambda x, t: fn([x, t], a), [g], [x.expand(shape), t.expand(shape)])


def bce_with_logits(ins, a):
    x, t, w, pw = (ins + [None, None])[:4]
    return F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction=a.get("reduction", "mean"))


def bce_with_logits_backward(ins, a):
    x, t, g, w, pw = (ins + [None, None])[:5]
    return grads_of(lambda x, t: bce_with_logits([x, t, w, pw], a), [g], [x, t])


REFS = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "_softmax_backward": softmax_backward,
    "_log_softmax_backward": log_softmax_backward,
    "dropout": dropout,
    "layer_norm": layer_norm,
    "_layer_norm_backward": layer_norm_backward,
    "rms_norm": rms_norm,
    "_rms_norm_backward": rms_norm_backward,
    "group_norm": group_norm,
    "_group_norm_backward": group_norm_backward,
    "batch_norm": batch_norm,
    "_batch_norm_backward": batch_norm_backward,
    "scaled_dot_product_attention": attention,
    "_scaled_dot_product_attention_backward": attention_backward,
    "cross_entropy": cross_entropy,
    "_cross_entropy_backward": cross_entropy_backward,
    "nll_loss": nll_loss,
    "_nll_loss_backward": nll_loss_backward,
    "mse_loss": pointwise_loss("mse_loss"),
    "l1_loss": pointwise_loss("l1_loss"),
    "smooth_l1_loss": pointwise_loss("smooth_l1_loss"),
    "_pointwise_loss_backward": pointwise_loss_backward,
    "binary_cross_entropy_with_logits": bce_with_logits,
    "_binary_cross_entropy_with_logits_backward": bce_with_logits_backward,
}
