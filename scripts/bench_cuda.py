"""The CUDA backend against PyTorch CUDA, side by side in one run.

    python3 scripts/bench_cuda.py --go build/cuda-bench.txt [--out results.json]

Times PyTorch on the cases of bench/cuda_test.go (the same shapes, TF32 off
for f32 products on both sides, work queued back to back and timed until the
device is idle), reads the Go benchmark output given with --go, and prints
one table: each case's rate for webtensor and PyTorch and their ratio
(PyTorch time / webtensor time; the issue's targets are >= 0.9 for the
matrix products and >= 0.8 for the rest).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time

import torch

TARGETS = {"matmul/f32": 0.9, "matmul/bf16": 0.9, "add": 0.8, "gelu": 0.8, "softmax": 0.8,
           "layer_norm": 0.8, "mlp_step": 0.8, "transformer_step": 0.8}


def timed(fn, iters: int) -> float:
    """Seconds per call: iters calls queued, then a synchronisation; median of 5."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / iters)
    return statistics.median(runs)


def torch_cases() -> dict[str, tuple[float, str]]:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(1)
    out: dict[str, tuple[float, str]] = {}
    n = 4096
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.randn(n, n, device=dev, dtype=dt, generator=g)
        y = torch.randn(n, n, device=dev, dtype=dt, generator=g)
        s = timed(lambda x=x, y=y: x @ y, 50)
        out[f"matmul/{name}"] = (2 * n**3 / s / 1e12, "TFLOP/s")
    m = 64 << 20
    x, y = torch.randn(m, device=dev, generator=g), torch.randn(m, device=dev, generator=g)
    out["add"] = (3 * 4 * m / timed(lambda: x + y, 50) / 1e9, "GB/s")
    out["gelu"] = (2 * 4 * m / timed(lambda: torch.nn.functional.gelu(x), 50) / 1e9, "GB/s")
    r = torch.randn(8192, 4096, device=dev, generator=g)
    rows = 2 * 4 * 8192 * 4096
    out["softmax"] = (rows / timed(lambda: torch.softmax(r, -1), 50) / 1e9, "GB/s")
    out["layer_norm"] = (rows / timed(lambda: torch.nn.functional.layer_norm(r, (4096,)), 50) / 1e9, "GB/s")
    out["mlp_step"] = mlp_step()
    out["transformer_step"] = transformer_step()
    return out


def mlp_step() -> tuple[float, str]:
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(128, 784, device="cuda")
    y = torch.randint(0, 10, (128,), device="cuda")

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    flops = 3 * 2.0 * 128 * (784 * 512 + 512 * 512 + 512 * 10)
    return flops / timed(step, 200) / 1e9, "GFLOP/s"


def transformer_step() -> tuple[float, str]:
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 256, activation="gelu", batch_first=True).cuda().eval()
    x = torch.randn(8, 32, 64, device="cuda")

    def step():
        layer.zero_grad()
        layer(x).sum().backward()

    tokens = 8.0 * 32
    flops = 3 * 2 * (tokens * (4 * 64 * 64 + 2 * 64 * 256) + 2 * 8 * 32 * 32 * 64)
    return flops / timed(step, 200) / 1e9, "GFLOP/s"


GO_NAMES = {"CUDAMatmul/f32": "matmul/f32", "CUDAMatmul/bf16": "matmul/bf16", "CUDAElementwise/add": "add",
            "CUDAElementwise/gelu": "gelu", "CUDARows/softmax": "softmax", "CUDARows/layer_norm": "layer_norm",
            "CUDATrainStep": "mlp_step", "CUDATransformerStep": "transformer_step"}


def go_cases(path: str) -> dict[str, list[float]]:
    """Rates from `go test -bench` output (every -count run), by case."""
    out: dict[str, list[float]] = {}
    line = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) (\S+)")
    for text in open(path, encoding="utf-8"):
        m = line.match(text.strip())
        if m and m.group(1) in GO_NAMES:
            out.setdefault(GO_NAMES[m.group(1)], []).append(float(m.group(2)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--go", required=True, help="go test -bench output of bench/cuda_test.go")
    ap.add_argument("--out", help="write the table as JSON here")
    args = ap.parse_args()
    peer = torch_cases()
    ours = go_cases(args.go)
    print(f"GPU: {torch.cuda.get_device_name()}, PyTorch {torch.__version__}")
    print("| case | unit | webtensor | PyTorch | ratio | target |")
    print("|---|---|---|---|---|---|")
    rows = []
    for case, (rate, unit) in peer.items():
        mine = statistics.median(ours[case]) if case in ours else float("nan")
        ratio = mine / rate
        rows.append({"case": case, "unit": unit, "webtensor": mine, "pytorch": rate, "ratio": ratio,
                     "target": TARGETS[case]})
        mark = "" if ratio >= TARGETS[case] else " (below)"
        print(f"| {case} | {unit} | {mine:.2f} | {rate:.2f} | {ratio:.3f}{mark} | {TARGETS[case]} |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
