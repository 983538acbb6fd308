"""Helpers the reference modules share. A module of refs/ holds the references
of one op category, refs/<category>.py, as REFS, a dict literal of
"op_name": fn(ins, attrs) entries, one per line (a Go test reads the names
to hold each op to its category's file); this one holds no REFS.
"""

import torch

_TORCH_DTYPES = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i64": torch.int64,
    "i32": torch.int32,
    "u32": torch.uint32,
    "i16": torch.int16,
    "i8": torch.int8,
    "u8": torch.uint8,
    "bool": torch.bool,
    "u16": torch.uint16,
    "u64": torch.uint64,
}


def _get(attrs, name, default=None):
    """An attribute, or default when the sample left it out."""
    v = attrs.get(name)
    return default if v is None else v


def _dtype_name(attrs, default):
    return _get(attrs, "dtype", default)


def _float(x):
    return x if x.is_floating_point() or x.is_complex() else x.to(torch.float64)


def _float_result(fn):
    """fn with integer inputs taken as float64: ops that give floats for
    integers are then the exact result rounded once, as the Go kernels give."""
    return lambda ins, a: fn(*[_float(x) for x in ins])


def _native_dtypes(fn):
    """fn given its float inputs in their own dtypes, not upcast to float64:
    for ops whose result depends on the dtype's precision (nextafter steps
    one float32 ulp), where the float64 result rounded would be wrong."""
    ref = _plain(fn)
    ref.native_dtypes = True
    return ref


def _plain(fn):
    return lambda ins, a: fn(*ins)


def _spatial(attrs, name, default, dims=2):
    """An int-list attribute as a tuple with one value per spatial dim."""
    v = attrs.get(name)
    if v is None:
        v = [default]
    if len(v) == 1:
        v = list(v) * dims
    return tuple(v)


def grads_of(fn, upstream, inputs):
    """Gradients of fn(*inputs) (one tensor or a tuple) for upstream
    gradients (None where none flows), by torch autograd."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    outs = fn(*leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, u) for o, u in zip(outs, upstream, strict=False) if u is not None and o.requires_grad]
    return torch.autograd.grad([o for o, _ in pairs], leaves, [u for _, u in pairs], allow_unused=True)


def grad_at(f, x, upstream=None):
    """The gradient of f at x for the upstream gradient (ones by default)."""
    leaf = x.detach().clone().requires_grad_(True)
    y = f(leaf)
    up = torch.ones_like(y) if upstream is None else upstream.expand_as(y)
    # create_graph keeps the result differentiable in the upstream gradient
    # (_einsum_scatter is checked forward and backward through it).
    (g,) = torch.autograd.grad(y, leaf, grad_outputs=up, create_graph=True)
    return g


def _fresh(fn):
    # Views and no-op casts would share memory with the inputs, which the
    # vector file writer rejects: hand back copies.
    def ref(ins, a):
        r = fn(ins, a)
        if isinstance(r, (tuple, list)):
            return tuple(o.clone() for o in r)
        return r.clone()
    return ref


def _fresh_all(refs):
    """The references with every result copied (_fresh)."""
    return {name: _fresh(fn) for name, fn in refs.items()}
