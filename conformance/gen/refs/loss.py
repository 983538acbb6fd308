"""Reference functions for the losses and their gradients (core/ops_loss.go),
by PyTorch and its autograd.
"""

import warnings

import torch
import torch.nn.functional as F

from ._util import grads_of


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
