"""Reference functions for the normalisations: layer, RMS, group and batch
norm and their gradients, and normalize (core/ops_norm.go, core/ops_norm_normalize.go), by
PyTorch and its autograd.
"""

import torch
import torch.nn.functional as F

from ._util import grads_of


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
    y = F.group_norm(x, a["num_groups"], w, b, a.get("eps", 1e-5))
    return F.silu(y) if a.get("activation", "none") == "silu" else y


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


def normalize(ins, a):
    (x,) = ins
    return F.normalize(x, a.get("p", 2.0), a.get("axis", 1), a.get("eps", 1e-12))


REFS = {
    "layer_norm": layer_norm,
    "_layer_norm_backward": layer_norm_backward,
    "rms_norm": rms_norm,
    "_rms_norm_backward": rms_norm_backward,
    "group_norm": group_norm,
    "_group_norm_backward": group_norm_backward,
    "batch_norm": batch_norm,
    "_batch_norm_backward": batch_norm_backward,
    "normalize": normalize,
}
