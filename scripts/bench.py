"""`make bench`: webtensor's Go benchmarks and the same work in NumPy and
PyTorch (CPU) in one run, printed as a table of rates and ratios and written
to docs/perf.md.

The Go side is `go test -bench` over ./bench (the public API on the default
device); the peers are timed here, median of repeated runs after a warm-up.
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset by the Makefile for this
command only, so NumPy runs its best OpenBLAS kernel (see docs/DESIGN.md).
"""

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent


def timeit(fn, min_time=1.0, repeats=5):
    fn()
    runs = []
    for _ in range(repeats):
        n, start = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            el = time.perf_counter() - start
            if el >= min_time / repeats:
                break
        runs.append(el / n)
    return statistics.median(runs)


def peers():
    """Seconds per call for each case, for NumPy and PyTorch."""
    out = {}
    rng = np.random.default_rng(1)
    for n in (256, 512, 1024, 2048):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out[f"Matmul/{n}"] = {"numpy": timeit(lambda a=a, b=b: a @ b), "torch": timeit(lambda ta=ta, tb=tb: ta @ tb)}
    x = torch.randn(8, 64, 32, 32)
    w = torch.randn(64, 64, 3, 3)
    out["Conv2d"] = {"torch": timeit(lambda: torch.nn.functional.conv2d(x, w, padding=1))}
    s = rng.standard_normal((4096, 1024), dtype=np.float32)
    ts = torch.from_numpy(s)

    def np_softmax():
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def np_layer_norm():
        m = s.mean(axis=-1, keepdims=True)
        v = s.var(axis=-1, keepdims=True)
        return (s - m) / np.sqrt(v + 1e-5)

    out["Softmax"] = {"numpy": timeit(np_softmax), "torch": timeit(lambda: torch.softmax(ts, -1))}
    out["LayerNorm"] = {"numpy": timeit(np_layer_norm),
                        "torch": timeit(lambda: torch.nn.functional.layer_norm(ts, (1024,)))}
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xb, yb = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()

    out["TrainStep"] = {"torch": timeit(step)}
    out["Sum"] = {"numpy": timeit(lambda: s.sum(axis=-1)), "torch": timeit(lambda: ts.sum(-1))}
    return out


# Work per call, matching bench/bench_test.go.
WORK = {f"Matmul/{n}": (2.0 * n ** 3, "GFLOP/s") for n in (256, 512, 1024, 2048)}
WORK["Conv2d"] = (2.0 * 8 * 64 * 32 * 32 * 64 * 9, "GFLOP/s")
WORK["Softmax"] = (2.0 * 4 * 4096 * 1024, "GB/s")
WORK["LayerNorm"] = (2.0 * 4 * 4096 * 1024, "GB/s")
WORK["TrainStep"] = (3 * 2.0 * 128 * (784 * 512 + 512 * 512 + 512 * 10), "GFLOP/s")
WORK["Sum"] = (4.0 * 4096 * 1024, "GB/s")

# WebGPU cases: Go benchmark name -> the CPU case it is compared with.
GPU_CASES = {f"WebGPUMatmul/{v}/{n}": f"Matmul/{n}" for n in (256, 512, 1024, 2048)
             for v in ("tuned", "regblock16", "regblock4", "regblock", "tiled")}
GPU_CASES.update({f"WebGPU{c}": c for c in ("Conv2d", "Softmax", "LayerNorm", "Sum", "TrainStep")})

def rate(work, seconds):
    return work / seconds / 1e9 if seconds else None


def ratio(ours, peer):
    return f"{ours / peer:.3f}" if ours and peer else "-"


def fmt(r):
    return f"{r:.2f}" if r else "-"


LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) (GFLOP/s|GB/s)")


def gpu_table(go, ref):
    """WebGPU rows: rate, and the ratio to the CPU backend and to NumPy (or
    PyTorch where NumPy has no equivalent), all from this run."""
    rows = ["| case | unit | webtensor (webgpu) | webtensor (cpu) | NumPy | webgpu/cpu | webgpu/NumPy |",
            "|---|---|---|---|---|---|---|"]
    for case, base in GPU_CASES.items():
        if case not in go:
            continue
        work, unit = WORK[base]
        g, c = rate(work, go[case]), rate(work, go.get(base))
        peer = ref.get(base, {})
        n = rate(work, peer.get("numpy") or peer.get("torch"))
        rows.append(f"| {case.removeprefix('WebGPU')} | {unit} | {fmt(g)} | {fmt(c)} | {fmt(n)} | "
                    f"{ratio(g, c)} | {ratio(g, n)} |")
    return rows


def adapter_line():
    """The WebGPU adapter the benchmarks ran on, from `webtensor doctor`."""
    res = subprocess.run(["./build/webtensor", "doctor"], cwd=ROOT, capture_output=True, text=True,
                         check=False, env={**os.environ, "NODEVICE_SELECT": "1"})
    for line in res.stdout.splitlines():
        if line.strip().startswith("webgpu:0"):
            return line.split("ok", 1)[-1].split(";")[0].strip()
    return "no WebGPU adapter"


def go_bench(benchtime):
    cmd = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", benchtime, "-count", "1", "./bench/"]
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"go benchmarks failed:\n{res.stdout}\n{res.stderr}")
    out = {}
    for line in res.stdout.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(1)] = float(m.group(2)) * 1e-9
    return out


PLUGIN_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def plugin_bench(benchtime):
    """The WebAssembly plugin host: instantiation and per-op overhead against the built-in op."""
    cmd = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", benchtime, "-count", "1", "./plugins-wasm/"]
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"plugin benchmarks failed:\n{res.stdout}\n{res.stderr}")
    ns = {}
    for line in res.stdout.splitlines():
        m = PLUGIN_LINE.match(line)
        if m:
            ns[m.group(1)] = float(m.group(2))
    rows = ["| case | time | ratio to the built-in op |", "|---|---|---|"]
    for name, what in [("LoadWarmCache", "load a small plugin, warm compilation cache"),
                       ("LoadGoExampleWarmCache", "load the Go example plugin, warm cache"),
                       ("Instantiate", "re-instantiate a compiled plugin")]:
        if name in ns:
            rows.append(f"| {what} | {ns[name] / 1e6:.3f} ms | - |")
    for size in ("1M", "16"):
        base = ns.get(f"BuiltinAddScalar_{size}")
        for name, what in [(f"PluginAdd1_{size}", f"plugin x+1, {size} f32 (deadline on)"),
                           (f"PluginAdd1NoDeadline_{size}", f"plugin x+1, {size} f32 (WithNoDeadline)"),
                           (f"BuiltinAddScalar_{size}", f"built-in add scalar, {size} f32")]:
            if name in ns:
                ratio = f"{ns[name] / base:.2f}x" if base else "-"
                rows.append(f"| {what} | {ns[name] / 1e3:.2f} µs | {ratio} |")
    for size in ("16", "64K"):
        base = ns.get(f"BuiltinAddScalarParallel_{size}")
        for name, what in [(f"PluginAdd1Parallel_{size}", f"plugin x+1, {size} f32, 2 goroutines (instance pool)"),
                           (f"PluginAdd1Parallel1Instance_{size}",
                            f"plugin x+1, {size} f32, 2 goroutines (WithMaxInstances(1))"),
                           (f"BuiltinAddScalarParallel_{size}", f"built-in add scalar, {size} f32, 2 goroutines")]:
            if name in ns:
                ratio = f"{ns[name] / base:.2f}x" if base else "-"
                rows.append(f"| {what} | {ns[name] / 1e3:.2f} µs | {ratio} |")
    rt = ROOT / "build" / "plugin-roundtrip-python.txt"
    if rt.exists():
        rows.append(f"| scaffold, build, load and call a new Go plugin from Python (`make python-test`) | "
                    f"{float(rt.read_text()):.1f} s | - |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchtime", default="2s", help="go test -benchtime per case")
    ap.add_argument("--out", default=str(ROOT / "docs" / "perf.md"))
    args = ap.parse_args()
    go = go_bench(args.benchtime)
    plugins = plugin_bench("1s")
    print("timing NumPy and PyTorch ...", flush=True)
    ref = peers()
    rows = []
    for case, (work, unit) in WORK.items():
        g = go.get(case)
        p = ref.get(case, {})
        np_r, th_r, go_r = (rate(work, p.get("numpy")), rate(work, p.get("torch")), rate(work, g))
        rows.append([case, unit, fmt(go_r), fmt(np_r), fmt(th_r), ratio(go_r, np_r), ratio(go_r, th_r)])
    head = ["case", "unit", "webtensor (cpu)", "NumPy", "PyTorch", "webtensor/NumPy", "webtensor/PyTorch"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    table += ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(table))
    gpu = gpu_table(go, ref)
    print("\n".join(gpu))
    adapter = adapter_line()
    gover = subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()
    env = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
           f"NumPy {np.__version__}, PyTorch {torch.__version__} ({torch.get_num_threads()} threads), {gover}")
    doc = f"""# Performance

Measured by `make bench` on {datetime.date.today().isoformat()} ({env}).
Rates are higher-is-better; a ratio above 1 means webtensor is faster than the peer.
The webtensor column runs through the public op API on the CPU backend (pure Go, no cgo).
NumPy runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (its best kernel).
Peer cases without a NumPy equivalent (convolution, a training step) show '-'.

{chr(10).join(table)}

Cases: matmul of two n x n f32 matrices; conv2d 8x64x32x32 with 64 3x3 filters, padding 1;
softmax and layer_norm over the last axis of a 4096x1024 f32 tensor (GB/s counts one read and one
write); one training step (forward, cross-entropy, backward, Adam) of a 784-512-512-10 MLP at batch 128.

## WebGPU backend

On {adapter}, in the same run. GPU times include a device sync per call, so they are the
kernels' time, not the time to queue them. Matmul rows show the tuned choice and every variant:
`regblock16`/`regblock4` are the vec4 register-blocked kernels (16x8 and 8x8 blocks of c per
thread, for aligned f32 rows), `regblock` the strided scalar one, `tiled` the shared-memory one
real GPUs favour; the tuner times them once per device and shape class. Conv2d is a direct
convolution (one thread per output), softmax and layer_norm one thread per row, so on a
software driver they run far below the CPU backend; the training step is the MLP above with
every op on the GPU.

{chr(10).join(gpu)}

## WebAssembly plugins (wazero)

Instantiation with a warm compilation cache, and the overhead of a plugin op (a hand-assembled
module adding 1.0 to each element) against the built-in op doing the same work. With the default
per-call deadline wazero checks for cancellation in every loop iteration, which is what makes the
1M-element plugin op slow; `WithNoDeadline()` shows the cost without it.

The "2 goroutines" rows call the op from both cores at once (`b.RunParallel`; time per call, both
goroutines together; the ratio is to the built-in op called the same way). A plugin keeps a pool
of instances, one per call in flight, up to `WithMaxInstances` (default GOMAXPROCS);
`WithMaxInstances(1)` is the one-instance host, where the calls queue. On a shared machine take
the best of several runs: `go test -run '^$' -bench Parallel -benchtime 1s -count 10 ./plugins-wasm/`.

{chr(10).join(plugins)}
"""
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    # Sections other scripts own (and that this run did not produce) are
    # kept, so a partial `make bench` never drops someone else's numbers.
    out = Path(args.out)
    if out.exists():
        for sec in out.read_text().split("\n## ")[1:]:
            heading = sec.split("\n", 1)[0]
            if f"\n## {heading}\n" not in doc:
                doc = doc.rstrip() + "\n\n## " + sec.rstrip() + "\n"
    out.write_text(doc)
    print(f"wrote {args.out}")
    # The Python per-op overhead section (scripts/bench_overhead.py, also
    # `make python-overhead`) measures the installed SDK: install it first.
    subprocess.run(["make", "--no-print-directory", "python-sdk"], cwd=ROOT, check=True)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_overhead.py"), "--out", args.out], cwd=ROOT,
                   check=True, env={**os.environ, "NODEVICE_SELECT": "1"})


if __name__ == "__main__":
    main()
