"""Writes layers.safetensors: torch reference cases for the nn layer tests.

Run from the repository root with a Python that has torch and safetensors:
    .venv/bin/python nn/testdata/make_layers.py
Each case "<name>" stores the module's state dict under "<name>.<key>", its
inputs under "<name>.in.<i>" and torch's outputs under "<name>.out.<i>".
Cases with gradients also store a random "<name>.probe" and the gradients of
sum(output·probe) with respect to each parameter ("<name>.grad.<param>") and
to input 0 ("<name>.grad.input"). All
parameters are redrawn from N(0, 1)·0.5 so that no test can pass by loading
the default ones, zeros or a lucky initialisation.
"""
import torch
import torch.nn as nn
from safetensors.torch import save_file

torch.manual_seed(1234)
out = {}


def randomise(m):
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    return m


def add(name, m, inputs, outputs):
    for k, v in m.state_dict().items():
        out[f"{name}.{k}"] = v.detach().clone().contiguous()
    for i, x in enumerate(inputs):
        out[f"{name}.in.{i}"] = x.detach().clone().contiguous()
    for i, y in enumerate(outputs):
        out[f"{name}.out.{i}"] = y.detach().clone().contiguous()


def add_grads(name, m, inputs, forward):
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    m.zero_grad()
    with torch.enable_grad():
        y = forward(*xs)
        probe = torch.randn_like(y)
        (y * probe).sum().backward()
    out[f"{name}.probe"] = probe
    for k, p in m.named_parameters():
        out[f"{name}.grad.{k}"] = p.grad.clone()
    out[f"{name}.grad.input"] = xs[0].grad.clone()


def simple(name, m, *shape):
    randomise(m)
    x = torch.randn(*shape)
    add(name, m, [x], [m(x)])
    add_grads(name, m, [x], m)


with torch.no_grad():
    simple("linear", nn.Linear(4, 3), 2, 5, 4)
    simple("linear_nobias", nn.Linear(4, 3, bias=False), 6, 4)
    simple("conv1d", nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), 2, 4, 9)
    simple("conv2d", nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2)), 2, 3, 7, 8)
    simple("convt2d", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), 2, 4, 5, 5)
    simple("layernorm", nn.LayerNorm([3, 4]), 2, 3, 4)
    simple("rmsnorm", nn.RMSNorm([4]), 3, 4)
    simple("groupnorm", nn.GroupNorm(2, 6, eps=1e-3), 2, 6, 5)
    simple("batchnorm_batch_stats", nn.BatchNorm1d(3, track_running_stats=False), 5, 3)

    emb = randomise(nn.Embedding(10, 4))
    idx = torch.tensor([[1, 9, 0], [3, 3, 7]])
    add("embedding", emb, [idx], [emb(idx)])

    for name, kw in (("batchnorm", {}), ("batchnorm_cumulative", {"momentum": None})):
        bn = randomise(nn.BatchNorm2d(3, **kw))
        before = {k: v.clone() for k, v in bn.state_dict().items()}
        xs = [torch.randn(4, 3, 2, 2) + 1.5 for _ in range(3)]
        bn.train()
        y0, y1 = bn(xs[0]), bn(xs[1])
        bn.eval()
        y2 = bn(xs[2])
        after = {k: v.clone() for k, v in bn.state_dict().items()}
        bn.load_state_dict(before)
        add(name, bn, xs, [y0, y1, y2])
        for k in ("running_mean", "running_var", "num_batches_tracked"):
            out[f"{name}.after.{k}"] = after[k].clone()

    x = torch.randn(3, 4)
    for name, act in (("relu", nn.ReLU()), ("gelu", nn.GELU()), ("gelu_tanh", nn.GELU("tanh")),
                      ("silu", nn.SiLU()), ("tanh", nn.Tanh()), ("sigmoid", nn.Sigmoid()),
                      ("softmax", nn.Softmax(dim=0))):
        add(name, act, [x], [act(x)])

    mha = randomise(nn.MultiheadAttention(8, 2))
    q, k, v = torch.randn(5, 2, 8), torch.randn(6, 2, 8), torch.randn(6, 2, 8)
    add("mha", mha, [q, k, v], [mha(q, k, v, need_weights=False)[0]])
    attn_mask = torch.zeros(5, 6, dtype=torch.bool)
    attn_mask[0, 2] = attn_mask[3, 5] = True
    kpm = torch.zeros(2, 6, dtype=torch.bool)
    kpm[1, 4:] = True
    add("mha_masked", mha, [q, k, v, attn_mask, kpm],
        [mha(q, k, v, attn_mask=attn_mask, key_padding_mask=kpm, need_weights=False)[0]])
    add_grads("mha_masked", mha, [q, k, v], lambda q, k, v: mha(
        q, k, v, attn_mask=attn_mask, key_padding_mask=kpm, need_weights=False)[0])
    causal = nn.Transformer.generate_square_subsequent_mask(6)
    add("mha_causal", mha, [k, k, v], [mha(k, k, v, attn_mask=causal, need_weights=False)[0]])
    mha_bf = randomise(nn.MultiheadAttention(8, 4, batch_first=True, bias=False))
    qb = torch.randn(2, 5, 8)
    add("mha_batch_first", mha_bf, [qb], [mha_bf(qb, qb, qb, need_weights=False)[0]])

    for name, kw in (("encoder", {}), ("encoder_prenorm_gelu", {"norm_first": True, "activation": "gelu"})):
        enc = randomise(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw)).eval()
        src = torch.randn(5, 2, 8)
        add(name, enc, [src], [enc(src)])
        add_grads(name, enc, [src], enc)

save_file(out, "nn/testdata/layers.safetensors")
