"""diffuse's Go benchmarks beside diffusers on the same CPU, in one run (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42):

    python diffuse/testdata/bench_diffusers.py [--count 5] [--webgpu]

It runs `go test -bench` for BenchmarkUNet2DConditionForward and BenchmarkSchedulerLoop (the median
of --count runs), then times the same work in diffusers in this process: a UNet2DConditionModel of
testdata/bench_unet.json (seeded diffusers initialisation; the timing does not depend on the
weights) on a batch of 2 latents with 16 text tokens under torch.no_grad, and each scheduler's
20-step loop (scale_model_input and step with a fixed model output) on the same latents, two
warm-up calls and then the median of rounds. Both sides use the same thread count
(WEBTENSOR_NUM_THREADS if set, else the CPUs this process may use). It prints a Markdown table of
milliseconds per call and the ratio diffusers' time / webtensor's (above 1: webtensor is faster).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def thread_count():
    env = os.environ.get("WEBTENSOR_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


THREADS = thread_count()
for _var in ("WEBTENSOR_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
os.environ.setdefault("NODEVICE_SELECT", "1")

import torch  # noqa: E402
from diffusers import (  # noqa: E402
    DDIMScheduler,
    DPMSolverMultistepScheduler,
    EulerDiscreteScheduler,
    UNet2DConditionModel,
)

torch.set_num_threads(THREADS)

BATCH, SEQ, STEPS = 2, 16, 20  # as diffuse/bench_test.go
SCHEDULERS = {"DDIMScheduler": DDIMScheduler, "EulerDiscreteScheduler": EulerDiscreteScheduler,
              "DPMSolverMultistepScheduler": DPMSolverMultistepScheduler}
LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def go_bench(count, webgpu):
    pattern = "UNet2DConditionForward|SchedulerLoop"
    cmd = ["go", "test", "-run", "^$", "-bench", pattern, "-benchtime", "1s", "-count", str(count), "./diffuse/"]
    if not webgpu:
        cmd[4:4] = ["-skip", "webgpu"]
        cmd[cmd.index("-bench") + 1] = "UNet2DConditionForward/cpu|SchedulerLoop/cpu"
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"go benchmarks failed:\n{res.stdout}\n{res.stderr}")
    runs = {}
    for line in res.stdout.splitlines():
        m = LINE.match(line)
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)) * 1e-9)
    return {k: statistics.median(v) for k, v in runs.items()}


def interleaved(fns, repeats=5, min_time=2.0):
    """Seconds per call of each fn: two warm-up calls, a batch size per fn of about
    min_time/repeats, then rounds in which the fns take turns; the median of the rounds."""
    batch = {}
    for name, fn in fns.items():
        fn()
        start = time.perf_counter()
        fn()
        batch[name] = max(1, int(min_time / repeats / max(time.perf_counter() - start, 1e-7)))
    runs = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(batch[name]):
                fn()
            runs[name].append((time.perf_counter() - start) / batch[name])
    return {name: statistics.median(r) for name, r in runs.items()}


def torch_cases():
    with open(os.path.join(HERE, "bench_unet.json")) as f:
        cfg = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    torch.manual_seed(1)
    unet = UNet2DConditionModel(**cfg).eval()
    gen = torch.Generator().manual_seed(2)
    s = cfg["sample_size"]
    x = torch.randn((BATCH, cfg["in_channels"], s, s), generator=gen)
    ctx = torch.randn((BATCH, SEQ, cfg["cross_attention_dim"]), generator=gen)
    t = torch.tensor(500)

    def forward():
        with torch.no_grad():
            unet(x, t, ctx)

    fns = {"UNet2DConditionForward/cpu": forward}
    eps = 0.1 * x
    for name, cls in SCHEDULERS.items():
        def loop(cls=cls):
            sched = cls()
            sched.set_timesteps(STEPS)
            y = x
            for ts in sched.timesteps:
                sched.scale_model_input(y, ts)
                y = sched.step(eps, ts, y).prev_sample

        fns[f"SchedulerLoop/cpu/{name}"] = loop
    return fns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=5, help="go test -count: the Go figure is the median of the runs")
    ap.add_argument("--webgpu", action="store_true", help="also run the Go benchmarks on WebGPU (no diffusers peer)")
    args = ap.parse_args()
    go = go_bench(args.count, args.webgpu)
    ref = interleaved(torch_cases())
    import diffusers

    print(f"\nthreads {THREADS}; PyTorch {torch.__version__}, diffusers {diffusers.__version__}\n")
    print("| case | webtensor ms | diffusers ms | diffusers time / ours |")
    print("|---|---|---|---|")
    for name in sorted(go):
        ours, peer = go[name], ref.get(name)
        ratio = f"{peer / ours:.2f}" if peer else "-"
        peer_ms = f"{peer * 1e3:.2f}" if peer else "-"
        print(f"| {name} | {ours * 1e3:.2f} | {peer_ms} | {ratio} |")


if __name__ == "__main__":
    main()
