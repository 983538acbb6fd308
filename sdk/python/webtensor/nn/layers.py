"""Layers, as torch.nn's: same constructor arguments, state-dict names and
outputs, and the Go nn package's initialisation (same seed, same weights)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import _ops
from .._tensor import Tensor, full, no_grad, tensor, zeros
from . import functional as F
from .init import _default_weight_and_bias, _normal_values, constant_, xavier_uniform_
from .module import Module, Parameter, _replace


def _param(t: Tensor | None) -> Parameter | None:
    """A Parameter owning the handle of t, a fresh leaf the caller made (t is left empty)."""
    if t is None:
        return None
    p = object.__new__(Parameter)
    p._h, p._keep = t._h, t._keep
    t._h, t._keep = 0, None
    p.requires_grad = True
    return p


def _pair(v, n: int, what: str) -> list[int]:
    vals = [int(v)] * n if isinstance(v, int) else [int(x) for x in v]
    if len(vals) != n:
        raise ValueError(f"{what} takes 1 or {n} values, got {v!r}")
    return vals


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """y = x·Wᵀ + b over the last dimension. State: weight (out, in), bias (out)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: sizes must be >= 0, got in={in_features} out={out_features}")
        self.in_features, self.out_features = in_features, out_features
        w, b = _default_weight_and_bias((out_features, in_features), out_features if bias else None, dtype, device)
        self.register_parameter("weight", _param(w))
        self.register_parameter("bias", _param(b))

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class _ConvNd(Module):
    _op = ""

    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, device, dtype):
        super().__init__()
        name = type(self).__name__
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: padding_mode {padding_mode!r} (only 'zeros')")
        if in_channels < 1 or out_channels < 1 or groups < 1:
            raise ValueError(f"{name}: channels and groups must be >= 1")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in ({in_channels}) and out ({out_channels}) channels must be divisible "
                             f"by groups ({groups})")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = tuple(_pair(kernel_size, n, "kernel_size"))
        self.stride = tuple(_pair(stride, n, "stride"))
        self.dilation = tuple(_pair(dilation, n, "dilation"))
        if isinstance(padding, str):
            if padding == "valid":
                padding = 0
            elif padding == "same":
                if any(s != 1 for s in self.stride):
                    raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
                total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size, strict=True)]
                if any(t % 2 for t in total):
                    raise NotImplementedError(f"{name}: padding='same' with an even receptive field needs "
                                              "asymmetric padding; pad the input with wt.pad instead")
                padding = [t // 2 for t in total]
            else:
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of 'valid', 'same'")
        self.padding = tuple(_pair(padding, n, "padding"))
        w_shape = (out_channels, in_channels // groups, *self.kernel_size)
        w, b = _default_weight_and_bias(w_shape, out_channels if bias else None, dtype, device)
        self.register_parameter("weight", _param(w))
        self.register_parameter("bias", _param(b))

    def forward(self, x: Tensor) -> Tensor:
        return getattr(_ops, self._op)(x, self.weight, self.bias, stride=list(self.stride),
                                       padding=list(self.padding), dilation=list(self.dilation), groups=self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if any(self.padding):
            s += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + ("" if self.bias is not None else ", bias=False")


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L). State: weight (out, in/groups, k), bias (out)."""

    _op = "conv1d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W). State: weight (out, in/groups, kh, kw), bias (out)."""

    _op = "conv2d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims, then scale by weight
    (ones) and shift by bias (zeros)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        shape = [normalized_shape] if isinstance(normalized_shape, int) else [int(s) for s in normalized_shape]
        if not shape or any(s < 0 for s in shape):
            raise ValueError(f"LayerNorm: normalized_shape must be a non-empty valid shape, got {normalized_shape!r}")
        self.normalized_shape, self.eps, self.elementwise_affine = tuple(shape), eps, elementwise_affine
        affine = elementwise_affine
        self.register_parameter("weight", _param(full(shape, 1.0, dtype=dtype, device=device) if affine else None))
        with_bias = affine and bias
        self.register_parameter("bias", _param(full(shape, 0.0, dtype=dtype, device=device) if with_bias else None))

    def forward(self, x: Tensor) -> Tensor:
        return _ops.layer_norm(x, list(self.normalized_shape), self.weight, self.bias, eps=self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _BatchNorm(Module):
    """Per-channel normalisation of (N, C, ...) with batch statistics when
    training and running ones in eval mode. momentum=None keeps a cumulative
    average. State: weight, bias, running_mean, running_var, num_batches_tracked."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__()
        if num_features < 1:
            raise ValueError(f"{type(self).__name__}: num_features must be >= 1, got {num_features}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        n = num_features
        self.register_parameter("weight", _param(full(n, 1.0, dtype=dtype, device=device) if affine else None))
        self.register_parameter("bias", _param(full(n, 0.0, dtype=dtype, device=device) if affine else None))
        if track_running_stats:
            self.register_buffer("running_mean", full(num_features, 0.0, dtype=dtype, device=device))
            self.register_buffer("running_var", full(num_features, 1.0, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", zeros((), dtype="i64", device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, x: Tensor) -> Tensor:
        rm, rv = self.running_mean, self.running_var
        if rm is None:
            return _ops.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=self.eps)[0]
        if not self.training:
            return _ops.batch_norm(x, rm, rv, self.weight, self.bias, training=False, eps=self.eps)[0]
        cumulative = self.momentum is None
        momentum = 1.0 if cumulative else self.momentum
        y, mean, var = _ops.batch_norm(x, rm, rv, self.weight, self.bias, training=True, momentum=momentum,
                                       eps=self.eps)
        with no_grad():
            count = self.num_batches_tracked + 1
            if cumulative:
                n = count.to(mean.dtype)
                mean = rm + (mean - rm) / n
                var = rv + (var - rv) / n
            _replace(self.num_batches_tracked, count)
            _replace(rm, mean.detach())
            _replace(rv, var.detach())
        return y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    pass


class BatchNorm2d(_BatchNorm):
    pass


class Embedding(Module):
    """A lookup table from integer indices to rows of weight (num, dim), drawn from N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, device=None,
                 dtype=None, _weight: Tensor | None = None):
        super().__init__()
        if padding_idx is not None:
            raise NotImplementedError("Embedding: padding_idx is not supported")
        if num_embeddings < 0 or embedding_dim < 0:
            raise ValueError(f"Embedding: sizes must be >= 0, got {num_embeddings}, {embedding_dim}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if _weight is None:
            self.weight = _param(_normal_values((num_embeddings, embedding_dim), 0.0, 1.0, dtype, device))
        else:
            self.weight = Parameter(_weight)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True) -> Embedding:
        num, dim = embeddings.shape
        e = cls(num, dim, _weight=embeddings if isinstance(embeddings, Tensor) else tensor(embeddings))
        e.weight.requires_grad = not freeze
        return e

    def forward(self, indices: Tensor) -> Tensor:
        return _ops.embedding(self.weight, indices)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """Zero each element with probability p in training mode, scaling the rest by 1/(1-p)."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return _ops.relu(x)


class GELU(Module):
    """x·Φ(x); approximate="tanh" is torch's tanh approximation."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return _ops.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return _ops.silu(x)


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return _ops.tanh(x)


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return _ops.sigmoid(x)


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        if dim is None:
            raise ValueError("Softmax: give dim (the implicit choice of torch is deprecated)")
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return _ops.softmax(x, axis=self.dim)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return _ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class CrossEntropyLoss(Module):
    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class MSELoss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _ops.mse_loss(input, target, reduction=self.reduction)


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention with equal query, key and value widths.
    State: in_proj_weight (3E, E), in_proj_bias (3E), out_proj.weight, out_proj.bias.
    Without need_weights (or with need_weights=False) it runs the fused
    scaled_dot_product_attention op; weights are averaged over heads unless
    average_attn_weights=False. Masks follow torch: a bool attn_mask or
    key_padding_mask is True where attention is NOT allowed; float masks add."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim != embed_dim")
        if embed_dim < 1 or num_heads < 1 or embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be a positive multiple of num_heads ({num_heads})")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        e = embed_dim
        # The Go package's order of draws: xavier in-projection, then out_proj as a Linear (whose bias is zeroed).
        self.in_proj_weight = _param(full((3 * e, e), 0.0, dtype=dtype, device=device))
        xavier_uniform_(self.in_proj_weight)
        if bias:
            self.in_proj_bias = _param(full(3 * e, 0.0, dtype=dtype, device=device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, device=device, dtype=dtype)
        if self.out_proj.bias is not None:
            constant_(self.out_proj.bias, 0.0)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = query.ndim == 3
        q, k, v = query, key, value
        if not batched:
            q, k, v = (_ops.unsqueeze(t, 0) for t in (q, k, v))
        elif not self.batch_first:
            q, k, v = (_ops.transpose(t, 0, 1) for t in (q, k, v))
        n, tq, e = q.shape[0], q.shape[1], self.embed_dim
        s = k.shape[1]
        qp, kp, vp = self._project(query is key and key is value, q, k, v)
        qh, kh, vh = self._heads(qp, n, tq), self._heads(kp, n, s), self._heads(vp, n, s)
        bias = self._bias(attn_mask, key_padding_mask, is_causal, n, tq, s, batched, qh)
        scale = 1 / math.sqrt(max(self.head_dim, 1))
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights or p > 0:
            scores = _ops.matmul(qh, _ops.transpose(kh, -2, -1)) * scale
            if is_causal and bias is None:
                bias = F._causal_bias(tq, s, scores)
            if bias is not None:
                scores = scores + bias
            weights = F.dropout(_ops.softmax(scores, axis=-1), p, True)
            out = _ops.matmul(weights, vh)
        else:
            out = _ops.scaled_dot_product_attention(qh, kh, vh, bias, is_causal=is_causal and bias is None,
                                                    scale=scale)
        out = _ops.reshape(_ops.permute(out, [0, 2, 1, 3]), [n, tq, e])
        out = self.out_proj(out)
        if not batched:
            out = _ops.squeeze(out, [0])
        elif not self.batch_first:
            out = _ops.transpose(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = _ops.mean(weights, 1)
        if not batched:
            weights = _ops.squeeze(weights, [0])
        return out, weights

    def _project(self, self_attention: bool, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e, w, b = self.embed_dim, self.in_proj_weight, self.in_proj_bias
        if self_attention:  # one matmul with the stacked weight
            both = F.linear(q, w, b)
            return tuple(_ops.slice(both, axis=-1, start=i * e, stop=(i + 1) * e) for i in range(3))  # type: ignore

        def rows(t, i):
            return None if t is None else _ops.slice(t, axis=0, start=i * e, stop=(i + 1) * e)

        return F.linear(q, rows(w, 0), rows(b, 0)), F.linear(k, rows(w, 1), rows(b, 1)), F.linear(v, rows(w, 2),
                                                                                                 rows(b, 2))

    def _heads(self, x: Tensor, n: int, t: int) -> Tensor:
        """(N, T, E) -> (N, H, T, E/H)."""
        return _ops.permute(_ops.reshape(x, [n, t, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def _bias(self, attn_mask, key_padding_mask, is_causal, n, tq, s, batched, like) -> Tensor | None:
        """The masks as one float bias broadcastable to (N, H, L, S), or None."""
        if attn_mask is None and key_padding_mask is None:
            return None
        bias = None
        if attn_mask is not None:
            bias = _score_bias(attn_mask, like)
            if attn_mask.ndim == 3:
                bias = _ops.reshape(bias, [n, self.num_heads, tq, s])
        if key_padding_mask is not None:
            kp = _score_bias(key_padding_mask, like)
            if not batched:
                kp = _ops.unsqueeze(kp, 0)
            kp = _ops.reshape(kp, [n, 1, 1, s])
            bias = kp if bias is None else bias + kp
        if is_causal:
            bias = bias + F._causal_bias(tq, s, like)
        return bias

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


def _score_bias(mask: Tensor, like: Tensor) -> Tensor:
    """A bool mask (True: masked out) as 0 / -inf; a float mask in like's dtype."""
    if mask.dtype.name == "bool":
        return F._bool_to_bias(mask, like)
    return mask.to(like.dtype) if mask.dtype.name != like.dtype.name else mask
