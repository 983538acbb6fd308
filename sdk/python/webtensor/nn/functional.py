"""torch.nn.functional-style functions over the registry ops (PyTorch's
argument names: dim rather than axis)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import _ops
from .._tensor import Tensor, tensor

# Re-exported as they are: the op names and arguments already match torch's.
binary_cross_entropy_with_logits = _ops.binary_cross_entropy_with_logits
l1_loss = _ops.l1_loss
mse_loss = _ops.mse_loss
smooth_l1_loss = _ops.smooth_l1_loss
relu = _ops.relu
silu = _ops.silu
sigmoid = _ops.sigmoid
tanh = _ops.tanh


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias over the last dimension (as the Go nn package computes it)."""
    y = _ops.matmul(input, _ops.transpose(weight, 0, 1))
    return y + bias if bias is not None else y


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return _ops.gelu(input, approximate=approximate)


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _ops.leaky_relu(input, negative_slope=negative_slope)


def softmax(input: Tensor, dim: int = -1) -> Tensor:
    return _ops.softmax(input, axis=dim)


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:
    return _ops.log_softmax(input, axis=dim)


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero elements with probability p and scale the rest by 1/(1-p) when
    training (the mask draws from the global generator); else the identity."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    return _ops.dropout(input, p=p, training=True)


def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return _ops.layer_norm(input, shape, weight, bias, eps=eps)


def embedding(input: Tensor, weight: Tensor) -> Tensor:
    """Rows of weight at the integer indices in input: shape input.shape + (dim,)."""
    return _ops.embedding(weight, input)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _ops.conv1d(input, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _ops.conv2d(input, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits (N, C, ...) or (C,) with class indices or class probabilities."""
    return _ops.cross_entropy(input, target, weight, reduction=reduction, ignore_index=ignore_index,
                              label_smoothing=label_smoothing)


def nll_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"
) -> Tensor:
    return _ops.nll_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """softmax(q·kᵀ·scale + mask)·v, torch's convention: a bool attn_mask is True
    where attention is allowed, a float one is added to the scores."""
    if dropout_p == 0.0:
        return _ops.scaled_dot_product_attention(query, key, value, attn_mask, is_causal=is_causal, scale=scale)
    d = query.shape[-1]
    s = scale if scale is not None else 1 / math.sqrt(max(d, 1))
    scores = _ops.matmul(query, _ops.transpose(key, -2, -1)) * s
    bias = attn_mask
    if bias is not None and bias.dtype.name == "bool":
        bias = _bool_to_bias(_ops.logical_not(bias), scores)
    if is_causal:
        causal = _causal_bias(query.shape[-2], key.shape[-2], scores)
        bias = causal if bias is None else bias + causal
    if bias is not None:
        scores = scores + bias
    return _ops.matmul(dropout(_ops.softmax(scores, axis=-1), dropout_p), value)


def _bool_to_bias(masked: Tensor, like: Tensor) -> Tensor:
    """0 where masked is False, -inf where True, in like's dtype and device."""
    dt, dev = like.dtype, like.device
    return _ops.where(masked, tensor(float("-inf"), dtype=dt, device=dev), tensor(0.0, dtype=dt, device=dev))


def _causal_bias(L: int, S: int, like: Tensor) -> Tensor:
    """The (L, S) mask with -inf above the diagonal (top-left aligned, as torch's is_causal)."""
    ninf = float("-inf")
    rows = [[ninf if j > i else 0.0 for j in range(S)] for i in range(L)]
    return tensor(rows, dtype=like.dtype, device=like.device)
