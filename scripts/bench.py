"""`make bench`: webtensor's Go benchmarks and the same work in NumPy and
PyTorch (CPU) in one run, printed as a table of rates and ratios and written
to docs/perf.md (each section this script owns is replaced in place; the
others are left as they are).

The Go side is `go test -bench` over ./bench (the public API on the default
device), the median of -count runs; the peers are timed here, interleaved
round by round after a warm-up, median of the rounds. Every side runs on the
same number of threads: WEBTENSOR_NUM_THREADS if set, else the CPUs this
process may use; the table says what each side reported. The Python rows
(an MLP training step, `a + b` on 8 elements) go through the installed
webtensor SDK. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset by the
Makefile for this command only, so NumPy runs its best OpenBLAS kernel (see
docs/DESIGN.md).

    scripts/bench.sh              # the full run (`make bench`); writes docs/perf.md
    scripts/bench.sh --cpu-only   # the CPU table and the Python overhead section only
    scripts/bench.sh --quick      # plumbing check: 1 iteration, 1 round; writes a temp file
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchenv  # noqa: E402

# Set before NumPy and PyTorch load, since OpenBLAS and OpenMP read them once;
# the Go benchmarks and the webtensor SDK read WEBTENSOR_NUM_THREADS.
THREADS = benchenv.setup_threads()

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import bench_overhead  # noqa: E402

# Work per call, matching bench/bench_test.go and bench/bench_cpu_test.go:
# Go benchmark name -> (work, unit). GB/s counts the bytes an op must read
# and write once; GFLOP/s the products' flops.
EW_N = 4 << 20
ROWS = 4096 * 1024
WORK = {f"Matmul/{n}": (2.0 * n ** 3, "GFLOP/s") for n in (256, 512, 1024, 2048)}
WORK.update({f"Elementwise/{op}": (3 * 4.0 * EW_N, "GB/s") for op in ("add", "mul")})
WORK.update({f"Elementwise/{op}": (2 * 4.0 * EW_N, "GB/s") for op in ("exp", "tanh", "gelu")})
WORK["Sum"] = (4.0 * ROWS, "GB/s")
WORK["SumAll"] = (4.0 * ROWS, "GB/s")
WORK["Softmax"] = (2 * 4.0 * ROWS, "GB/s")
WORK["SoftmaxFwdBwd"] = (5 * 4.0 * ROWS, "GB/s")
WORK["LayerNorm"] = (2 * 4.0 * ROWS, "GB/s")
WORK["LayerNormFwdBwd"] = (5 * 4.0 * ROWS, "GB/s")
WORK["Conv2d"] = (2.0 * 8 * 64 * 32 * 32 * 64 * 9, "GFLOP/s")
WORK["Conv2dFwdBwd"] = (3 * 2.0 * 8 * 64 * 32 * 32 * 64 * 9, "GFLOP/s")
WORK["TrainStep"] = (3 * 2.0 * 128 * (784 * 512 + 512 * 512 + 512 * 10), "GFLOP/s")
WORK["PyTrainStep"] = WORK["TrainStep"]
TF_D, TF_HEADS, TF_FF, TF_BATCH, TF_SEQ = 256, 4, 1024, 8, 128
WORK["TransformerStep"] = (3 * (2.0 * TF_BATCH * TF_SEQ * (4 * TF_D * TF_D + 2 * TF_D * TF_FF)
                                + 2 * 2.0 * TF_BATCH * TF_SEQ * TF_SEQ * TF_D), "GFLOP/s")

# The CPU table, in order: (case, label, peer the ratio target is against,
# target). Peer: "torch", "numpy", or "best" (the faster of the two). The
# targets are the ones issue 27 states; None where it states none.
# The targets are issue 27's (ratio = peer time / webtensor time).
CASES = [
    ("Elementwise/add", "add, 4M f32", "torch", 0.8),
    ("Elementwise/mul", "mul, 4M f32", "torch", 0.8),
    ("Elementwise/exp", "exp, 4M f32", "torch", 0.8),
    ("Elementwise/tanh", "tanh, 4M f32", "torch", 0.8),
    ("Elementwise/gelu", "gelu (erf), 4M f32", "torch", 0.8),
    ("Sum", "sum over the last axis, 4096x1024", "best", 0.8),
    ("SumAll", "sum of everything, 4096x1024", "best", 0.8),
    ("Softmax", "softmax, 4096x1024, forward", "torch", 0.8),
    ("SoftmaxFwdBwd", "softmax, 4096x1024, forward+backward", "torch", 0.8),
    ("LayerNorm", "layer_norm, 4096x1024, forward", "torch", 0.8),
    ("LayerNormFwdBwd", "layer_norm, 4096x1024, forward+backward", "torch", 0.8),
    ("Matmul/256", "sgemm 256", "numpy", None),
    ("Matmul/512", "sgemm 512", "numpy", None),
    ("Matmul/1024", "sgemm 1024", "numpy", 0.8),
    ("Matmul/2048", "sgemm 2048", "numpy", 0.8),
    ("Conv2d", "conv2d 8x64x32x32, 64 3x3, forward", "torch", 0.7),
    ("Conv2dFwdBwd", "conv2d 8x64x32x32, 64 3x3, forward+backward", "torch", 0.7),
    ("TrainStep", "MLP 784-512-512-10 step, batch 128, Adam (Go)", "torch", None),
    ("PyTrainStep", "MLP 784-512-512-10 step, batch 128, Adam (from Python)", "torch", 0.8),
    ("TransformerStep", "transformer encoder layer step (Go)", "torch", 0.7),
    ("AddSmall", "`a + b`, 8 f32, from Python", "torch", 1.0),
]
PEER_NAME = {"torch": "PyTorch", "numpy": "NumPy", "best": "the faster"}

# WebGPU cases: Go benchmark name -> the CPU case it is compared with.
GPU_CASES = {f"WebGPUMatmul/{v}/{n}": f"Matmul/{n}" for n in (256, 512, 1024, 2048)
             for v in ("tuned", "regblock16", "regblock4", "regblock", "tiled")}
GPU_CASES.update({f"WebGPU{c}": c for c in ("Conv2d", "Softmax", "LayerNorm", "Sum", "TrainStep")})


def interleaved(fns, repeats=5, min_time=1.0):
    """benchenv.interleaved with this script's shorter default batch."""
    return benchenv.interleaved(fns, repeats, min_time)


def fwd_bwd(fn, x, g, *leaves):
    """A forward and backward call with upstream gradient g, clearing the
    leaves' .grad so nothing accumulates (the Go side releases them)."""
    def step():
        fn(x).backward(g)
        for t in leaves:
            t.grad = None
    return step


def torch_mlp():
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xb, yb = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    return step


def webtensor_mlp():
    """The same step from Python through the webtensor SDK."""
    import webtensor as wt

    wt.set_num_threads(THREADS)
    wt.manual_seed(1)
    nn = wt.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    opt = wt.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(1)
    xb = wt.tensor(rng.standard_normal((128, 784), dtype=np.float32))
    yb = wt.tensor(rng.integers(0, 10, 128).astype(np.int64))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    return step, wt.get_num_threads()


def torch_transformer():
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(TF_D, TF_HEADS, TF_FF, dropout=0.0, batch_first=True)
    opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
    x = torch.randn(TF_BATCH, TF_SEQ, TF_D)
    target = torch.randn(TF_BATCH, TF_SEQ, TF_D)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(layer(x), target).backward()
        opt.step()
    return step


def peer_fns():
    """The peers' work, case by case: {case: {side: fn}}, side "numpy",
    "torch" or "webtensor" (the Python SDK), and the thread count the SDK
    reported. scripts/bench_cases.py times a few of them."""
    out = {}
    rng = np.random.default_rng(1)
    for n in (256, 512, 1024, 2048):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out[f"Matmul/{n}"] = dict(numpy=lambda a=a, b=b: a @ b, torch=lambda ta=ta, tb=tb: ta @ tb)
    na = rng.standard_normal(EW_N, dtype=np.float32)
    nb = rng.standard_normal(EW_N, dtype=np.float32)
    ta, tb = torch.from_numpy(na), torch.from_numpy(nb)
    out["Elementwise/add"] = dict(numpy=lambda: na + nb, torch=lambda: ta + tb)
    out["Elementwise/mul"] = dict(numpy=lambda: na * nb, torch=lambda: ta * tb)
    out["Elementwise/exp"] = dict(numpy=lambda: np.exp(na), torch=lambda: torch.exp(ta))
    out["Elementwise/tanh"] = dict(numpy=lambda: np.tanh(na), torch=lambda: torch.tanh(ta))
    out["Elementwise/gelu"] = dict(torch=lambda: torch.nn.functional.gelu(ta))
    s = rng.standard_normal((4096, 1024), dtype=np.float32)
    ts = torch.from_numpy(s)
    out["Sum"] = dict(numpy=lambda: s.sum(axis=-1), torch=lambda: ts.sum(-1))
    out["SumAll"] = dict(numpy=lambda: s.sum(), torch=lambda: ts.sum())

    def np_softmax():
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def np_layer_norm():
        m = s.mean(axis=-1, keepdims=True)
        v = s.var(axis=-1, keepdims=True)
        return (s - m) / np.sqrt(v + 1e-5)

    out["Softmax"] = dict(numpy=np_softmax, torch=lambda: torch.softmax(ts, -1))
    out["LayerNorm"] = dict(numpy=np_layer_norm, torch=lambda: torch.nn.functional.layer_norm(ts, (1024,)))
    xg = ts.clone().requires_grad_(True)
    g = torch.randn(4096, 1024)
    out["SoftmaxFwdBwd"] = dict(torch=fwd_bwd(lambda x: torch.softmax(x, -1), xg, g, xg))
    out["LayerNormFwdBwd"] = dict(torch=fwd_bwd(lambda x: torch.nn.functional.layer_norm(x, (1024,)), xg, g, xg))
    x = torch.randn(8, 64, 32, 32)
    w = torch.randn(64, 64, 3, 3)
    out["Conv2d"] = dict(torch=lambda: torch.nn.functional.conv2d(x, w, padding=1))
    xc, wc = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    gc = torch.randn(8, 64, 32, 32)
    out["Conv2dFwdBwd"] = dict(torch=fwd_bwd(lambda v: torch.nn.functional.conv2d(v, wc, padding=1), xc, gc, xc, wc))
    tstep = torch_mlp()
    out["TrainStep"] = dict(torch=tstep)
    wstep, wt_threads = webtensor_mlp()
    out["PyTrainStep"] = dict(webtensor=wstep, torch=tstep)
    out["TransformerStep"] = dict(torch=torch_transformer())
    return out, wt_threads


def peers(repeats, min_time):
    """Seconds per call for each case, for NumPy and PyTorch (and webtensor
    from Python: "webtensor"), and the thread count the SDK reported."""
    fns, wt_threads = peer_fns()
    return {case: interleaved(f, repeats, min_time) for case, f in fns.items()}, wt_threads


LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) (\S+))?")


def go_bench(benchtime, count, skip):
    """Median seconds per call of each Go benchmark over `count` runs, and
    the thread count the CPU backend reported (BenchmarkCPUThreads)."""
    cmd = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", benchtime, "-count", str(count), "./bench/"]
    if skip:
        cmd[4:4] = ["-skip", skip]
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"go benchmarks failed:\n{res.stdout}\n{res.stderr}")
    runs, threads = {}, None
    for line in res.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        if m.group(4) == "threads":
            threads = int(float(m.group(3)))
        elif m.group(4) in ("GFLOP/s", "GB/s"):
            runs.setdefault(m.group(1), []).append(float(m.group(2)) * 1e-9)
    return {k: statistics.median(v) for k, v in runs.items()}, threads


def stamp():
    """Today's date and the short commit, '+dirty' when the tree has changes."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                           check=False).stdout.strip()
    return datetime.date.today().isoformat(), commit + ("+dirty" if dirty else "")


def rate(work, seconds):
    return work / seconds / 1e9 if seconds else None


def ratio(ours, peer):
    return f"{ours / peer:.3f}" if ours and peer else "-"


def fmt(r):
    return f"{r:.2f}" if r else "-"


def cpu_rows(go, ref):
    """The CPU table. Ratios are peer time / webtensor time (above 1:
    webtensor is faster); the target applies to the ratio against the
    case's peer, and "meets" says whether this run reached it."""
    head = ["case", "unit", "webtensor", "NumPy", "PyTorch", "NumPy time / ours", "PyTorch time / ours",
            "target", "meets"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, label, peer, target in CASES:
        p = ref.get(case, {})
        ours = p.get("webtensor") if "webtensor" in p else go.get(case)
        tn, tt = p.get("numpy"), p.get("torch")
        if case == "AddSmall":
            unit = "µs per op"
            cells = [f"{t * 1e6:.2f}" if t else "-" for t in (ours, tn, tt)]
        else:
            work, unit = WORK[case]
            cells = [fmt(rate(work, t)) for t in (ours, tn, tt)]
        # time ratios: peer time / ours
        rn, rt = ratio(tn, ours), ratio(tt, ours)
        versus = {"torch": tt, "numpy": tn, "best": min((t for t in (tn, tt) if t), default=None)}[peer]
        if target is None:
            tcell, meets = "-", "-"
        else:
            tcell = f"≥{target} vs {PEER_NAME[peer]}"
            meets = "-" if not (ours and versus) else ("yes" if versus / ours >= target else "**no**")
        rows.append("| " + " | ".join([label, unit, *cells, rn, rt, tcell, meets]) + " |")
    return rows


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


def replace_section(body, heading, text):
    """body with the section `heading` (a '## ' line; None for the part
    before the first one) replaced by text, in place; a new section goes at
    the end."""
    text = text.rstrip() + "\n"
    if heading is None:
        nxt = body.find("\n## ")
        return text + ("\n" + body[nxt + 1:] if nxt >= 0 else "")
    start = body.find(f"\n{heading}\n")
    if start < 0:
        return body.rstrip() + "\n\n" + text
    nxt = body.find("\n## ", start + 1)
    return body[:start + 1] + text + ("\n" + body[nxt + 1:] if nxt >= 0 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchtime", default="1s", help="go test -benchtime per case and run")
    ap.add_argument("--count", type=int, default=5, help="go test -count: the Go figure is the median of the runs")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved rounds for the peers (median)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds of the Python per-op overhead section")
    ap.add_argument("--cpu-only", action="store_true", help="skip the WebGPU and plugin benchmarks")
    ap.add_argument("--no-sdk-install", action="store_true", help="use the installed Python SDK as it is")
    ap.add_argument("--quick", action="store_true",
                    help="check the plumbing: 1 iteration per Go case, 1 round per peer, no WebGPU, plugins or "
                         "SDK install; writes a temp file unless --out is given, marked not for comparison")
    ap.add_argument("--out", help="the doc to update (default docs/perf.md; a temp file with --quick)")
    args = ap.parse_args()
    min_time = 1.0
    if args.quick:
        args.benchtime, args.count, args.repeats, args.rounds, min_time = "1x", 1, 1, 2, 0.05
        args.cpu_only = args.no_sdk_install = True
    if args.out is None:
        args.out = (str(Path(tempfile.gettempdir()) / "webtensor-perf-quick.md") if args.quick
                    else str(ROOT / "docs" / "perf.md"))
    date, commit = stamp()
    if not args.no_sdk_install:
        # The Python rows and the overhead section measure the installed SDK:
        # install this tree's first.
        subprocess.run(["make", "--no-print-directory", "python-sdk"], cwd=ROOT, check=True)
    go, go_threads = go_bench(args.benchtime, args.count, "WebGPU|CUDA" if args.cpu_only else "")
    plugins = [] if args.cpu_only else plugin_bench("1s")
    print("timing NumPy, PyTorch and the Python SDK ...", flush=True)
    ref, wt_threads = peers(args.repeats, min_time)
    overhead, _ = bench_overhead.measure(args.rounds)
    (w, _), (t, _), (n, _) = overhead["a + b"]
    ref["AddSmall"] = {"webtensor": w, "torch": t, "numpy": n}
    table = cpu_rows(go, ref)
    print("\n".join(table))
    gover = subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()
    threads = (f"webtensor {go_threads} (Go benchmarks, cpu.NumThreads) and {wt_threads} (Python SDK), "
               f"PyTorch {torch.get_num_threads()}, NumPy's OpenBLAS {os.environ['OPENBLAS_NUM_THREADS']}")
    if go_threads != THREADS or wt_threads != THREADS or torch.get_num_threads() != THREADS:
        print(f"warning: thread counts differ: {threads}", file=sys.stderr)
    quick = ("**quick (not for comparison)**: one iteration per Go case and one round per peer, to check "
             "the plumbing.\n\n" if args.quick else "")
    env = (f"{benchenv.cpu_model()}; "
           f"NumPy {np.__version__}, PyTorch {torch.__version__}, {gover}")
    by = "`scripts/bench.sh --quick`" if args.quick else "`make bench`"
    cpu = f"""# Performance

{quick}Measured by {by} on {date} at commit {commit} ({env}).
Threads: {threads}.
The webtensor column runs through the public op API on the CPU backend (pure Go, no cgo), the
median of {args.count} `go test -bench` runs of {args.benchtime}; NumPy and PyTorch are timed in one
process, taking turns round by round after a warm-up, the median of {args.repeats} rounds. The two
"from Python" rows time webtensor's Python SDK in that process too, interleaved with PyTorch.
Rates are higher-is-better; a ratio is the peer's time over webtensor's (above 1: webtensor is
faster). The target is issue 27's, for the ratio against the peer it names ("the faster": the
faster of NumPy and PyTorch); "-" where the issue sets none. NumPy runs with OPENBLAS_CORETYPE
and OPENBLAS_L2_SIZE unset (its best kernel); cases it has no op for show '-'.

{chr(10).join(table)}

Cases: elementwise ops on 4M f32 (GB/s counts each input read and the output written once); sum
over the last axis and over everything of a 4096x1024 f32 tensor (GB/s read); softmax and
layer_norm (no affine) over the last axis of 4096x1024 f32, forward (one read and one write) and
forward+backward with a random upstream gradient (five passes: x, y; then y or x, dy, dx); sgemm of
two n x n f32 matrices (2n³ flops); conv2d 8x64x32x32 with 64 3x3 filters, padding 1, forward and
forward+backward (gradients of input and filters: 3x the forward's flops); one training step
(forward, cross-entropy, backward, Adam) of a 784-512-512-10 ReLU MLP at batch 128, in Go and from
Python; one training step (forward, mean squared error against a fixed target, backward, Adam) of a
transformer encoder layer (d_model {TF_D}, {TF_HEADS} heads, feed-forward {TF_FF}, ReLU, post-norm, dropout 0,
batch {TF_BATCH} x sequence {TF_SEQ}, batch first; torch.nn.TransformerEncoderLayer against
nn.NewTransformerEncoderLayer): its flops are 3x the forward's products (the four d x d projections
and the two feed-forward layers per token, q·kᵀ and the weighted sum of v per head), elementwise
work and Adam not counted; the training-step flop counts follow the same rule. `a + b` is the Python
per-op overhead section's measurement (below: best of its {args.rounds} rounds), in µs per op.
"""
    out = Path(args.out)
    body = out.read_text() if out.exists() else ("" if args.quick else "# Performance\n")
    if args.quick and not body and (ROOT / "docs" / "perf.md").exists():
        body = (ROOT / "docs" / "perf.md").read_text()
    body = replace_section(body, None, cpu)
    if not args.cpu_only:
        gpu = gpu_table(go, ref)
        print("\n".join(gpu))
        adapter = adapter_line()
        body = replace_section(body, "## WebGPU backend", f"""## WebGPU backend

On {adapter}, in the same run ({date}, commit {commit}). GPU times include a device sync per call, so they are
the kernels' time, not the time to queue them. Matmul rows show the tuned choice and every variant:
`regblock16`/`regblock4` are the vec4 register-blocked kernels (16x8 and 8x8 blocks of c per
thread, for aligned f32 rows), `regblock` the strided scalar one, `tiled` the shared-memory one
real GPUs favour; the tuner times them once per device and shape class. Conv2d is a direct
convolution (one thread per output), softmax and layer_norm one thread per row, so on a
software driver they run far below the CPU backend; the training step is the MLP above with
every op on the GPU.

{chr(10).join(gpu)}
""")
        body = replace_section(body, "## WebAssembly plugins (wazero)", f"""## WebAssembly plugins (wazero)

Measured in the same run ({date}, commit {commit}).
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
""")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body)
    # The Python per-op overhead section (scripts/bench_overhead.py, also
    # `make python-overhead`), from the same measurement as the `a + b` row.
    text = bench_overhead.section(args.rounds, False if args.quick else None, res=overhead)
    bench_overhead.update_doc(text, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
