"""diffuse's Go benchmarks beside diffusers on the same CPU, in one run (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42):

    python diffuse/testdata/bench_diffusers.py [--count 5] [--webgpu]

It builds diffuse's test binary once and times BenchmarkUNet2DConditionForward (with its int8 and
compiled forms) and BenchmarkSchedulerLoop on the CPU and the same work in diffusers in this process,
taking turns: --count rounds, each one run of the Go benchmarks and then one batch of each diffusers
case, so that a change of the machine's load falls on both sides (scripts/benchenv.py alternating);
with --webgpu the WebGPU forms run once after them. The diffusers work: a UNet2DConditionModel of
testdata/bench_unet.json, then of bench_unet_64.json (issue 21's size; seeded diffusers
initialisation; the timing does not depend on the weights) on a batch of 2 latents with 16 text
tokens under torch.no_grad, and each scheduler's 20-step loop (scale_model_input and step with a
fixed model output) on the 32x32 latents, two warm-up calls first; each side's figure is the median
of the rounds. Both sides use the same thread count (WEBTENSOR_NUM_THREADS if set, else the CPUs this process may
use). It prints a Markdown table of milliseconds per call and the ratio diffusers' time /
webtensor's (above 1: webtensor is faster). After the rounds it reads issue 21's two other figures
from the same binary (webtensor alone: no peer): the int8-against-f32 PSNR of TestInt8PSNR's pipelines
and BenchmarkVAEDecode's time and peak storage of a 64x64 latent decoded whole and in tiles.
"""

import argparse
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import benchenv  # noqa: E402

THREADS = benchenv.setup_threads()

import torch  # noqa: E402
from diffusers import (  # noqa: E402
    DDIMScheduler,
    DPMSolverMultistepScheduler,
    EulerDiscreteScheduler,
    UNet2DConditionModel,
)

torch.set_num_threads(THREADS)

BATCH, SEQ, STEPS = 2, 16, 20  # as diffuse/bench_test.go
PEER_OF = {}  # a Go case timed against another case's diffusers figure
SECTION = "## Diffusion (diffuse/) vs diffusers"
SCHEDULERS = {"DDIMScheduler": DDIMScheduler, "EulerDiscreteScheduler": EulerDiscreteScheduler,
              "DPMSolverMultistepScheduler": DPMSolverMultistepScheduler}


# The UNet configs timed: the small one every run has timed, and the size issue 21 names (64x64 latents,
# channels 64-128), whose rows carry its label. The scheduler loops run with the first.
CONFIGS = {"bench_unet.json": "", "bench_unet_64.json": " (64x64 latents, 64-128 channels)"}


def go_cmd(binary, config, schedulers, device):
    """The test binary's command for the benchmarks of config on device (cpu or webgpu)."""
    other = "webgpu" if device == "cpu" else "cpu"
    return [binary, "-test.run", "^$", "-test.bench", "UNet2DCondition" + ("|SchedulerLoop" if schedulers else ""),
            "-test.skip", "/" + other, "-test.benchtime", "1s", "-unet-config", "testdata/" + config]


def torch_cases(config, schedulers):
    with open(os.path.join(HERE, config)) as f:
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
    # The compiled and int8 forwards do the same work as diffusers' forward.
    PEER_OF["CompiledUNet2DCondition/cpu"] = "UNet2DConditionForward/cpu"
    PEER_OF["UNet2DConditionInt8Forward/cpu"] = "UNet2DConditionForward/cpu"
    if not schedulers:
        return fns
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


def rows(go, ref, label):
    """(case, ours ms, peer ms or None) rows, then the derived 20-step guided image; UNet rows carry label."""
    out = []
    for name in sorted(go):
        peer = ref.get(PEER_OF.get(name, name))
        out.append((name + ("" if name.startswith("SchedulerLoop") else label), go[name], peer))
    fwd, pfwd = go.get("UNet2DConditionForward/cpu"), ref.get("UNet2DConditionForward/cpu")
    loop, ploop = SCHEDULER_LOOP.get("go"), SCHEDULER_LOOP.get("peer")
    if fwd and loop and pfwd and ploop:
        # One guided image: the batch of 2 is the [negative, positive] pair.
        out.append((f"guided image, {STEPS} DDIM steps{label} (derived: {STEPS} forwards + the DDIM loop)",
                    STEPS * fwd + loop, STEPS * pfwd + ploop))
    return out


PSNR_LINE = re.compile(r"^\s+int8_test\.go:\d+: (.+?): PSNR ([\d.]+) dB")
DECODE_LINE = re.compile(r"^BenchmarkVAEDecode/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op"
                         r"\s+([\d.]+) live-peak-MB\s+([\d.]+) peak-MB")


def quality_and_memory(binary, godir):
    """Markdown rows of issue 21's other figures: TestInt8PSNR's PSNR lines and BenchmarkVAEDecode's
    time and peaks (live: a collection after every op; as run: the allocator's own pacing)."""
    out = []
    log = benchenv.run_or_exit([binary, "-test.run", "^TestInt8PSNR$", "-test.v"], godir, "TestInt8PSNR")
    for line in log.splitlines():
        if m := PSNR_LINE.match(line):
            out.append(f"| int8 against f32 weights: {m.group(1)} | PSNR {float(m.group(2)):.1f} dB | >= 38 dB |")
    log = benchenv.run_or_exit([binary, "-test.run", "^$", "-test.bench", "^BenchmarkVAEDecode$",
                                "-test.benchtime", "3x"], godir, "BenchmarkVAEDecode")
    decodes = {m.group(1): m for m in map(DECODE_LINE.match, log.splitlines()) if m}
    if len(out) != 3 or set(decodes) != {"whole", "tiled32"}:
        sys.exit(f"quality and memory: expected 3 PSNR lines and 2 decodes, got:\n{out}\n{log}")
    whole = float(decodes["whole"].group(3))
    for name, m in decodes.items():
        what = "whole" if name == "whole" else "in tiles of 32 latent px, overlap 8"
        live, paced = float(m.group(3)), float(m.group(4))
        out.append(f"| VAE decode, 64x64 latent to 512x512 (4 levels, 32-64 channels), {what} | "
                   f"{float(m.group(2)) / 1e6:.0f} ms; storage peak {live:.0f} MB live, {paced:.0f} MB as run | "
                   + ("-" if name == "whole" else f"{whole / live:.1f}x less live than whole") + " |")
    return out


# The DDIM loop's times (the first config's run), which each derived image row adds.
SCHEDULER_LOOP = {}


def write_doc(path, table, extra, load, rounds):
    import diffusers

    rev = benchenv.commit()
    head = f"""{SECTION}

`python diffuse/testdata/bench_diffusers.py --doc docs/perf.md` on {time.strftime("%Y-%m-%d")} at commit {rev}
on {benchenv.cpu_model()} ({THREADS} threads on both sides; PyTorch {torch.__version__}, diffusers
{diffusers.__version__}; load average {load:.1f} as the run began). The UNets are testdata/bench_unet.json (two
cross-attention levels of 32 and 64
channels, 32x32 latents, 16 text tokens of width 64, batch 2: one guided image) and, in the rows so labelled,
testdata/bench_unet_64.json (the size issue 21 names: 64x64 latents, 64 and 128 channels, heads of 16 and 32, text
width 128); weights drawn (timing does not depend on them). The scheduler loops run on the 32x32 latents. The
two sides take turns in {rounds} rounds, each one run of diffuse's test binary (`-test.bench`, 1 s a case, two passes:
the first warms the new process, the second is timed) on the CPU and then one batch of each diffusers case (after
warm-up): the figures are the medians of the rounds; the
WebGPU rows are one run after them. A ratio is
diffusers' time over webtensor's (above 1: webtensor is faster); issue 21's target is >= 1.5 for images/s.

| case | webtensor ms | diffusers ms | diffusers / webtensor |
| --- | ---: | ---: | ---: |
"""
    body = "".join(f"| {n} | {o * 1e3:.2f} | {p * 1e3:.2f} | {p / o:.2f} |\n" if p else
                   f"| {n} | {o * 1e3:.2f} | - | - |\n" for n, o, p in table)
    tail = """
Issue 21's other figures, from the same test binary after the rounds (webtensor alone): the images of
TestInt8PSNR's pipelines (tiny seeded models, f32 activations) with int8 weights against f32 weights, and
BenchmarkVAEDecode (random weights, CPU): its time, and the most storage the decode held at once beyond the
weights, live (a collection after every op: what the decode keeps) and as run (dead tensors go when the
allocator's own collections find them; the decoder releases its intermediates at their last use).

| measure | webtensor | target |
| --- | --- | --- |
""" + "".join(row + "\n" for row in extra)
    benchenv.write_section(path, SECTION, head + body + tail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=5,
                    help="rounds: each runs the Go benchmarks once (-benchtime 1s) and then diffusers' cases; "
                         "the figures are the medians of the rounds")
    ap.add_argument("--webgpu", action="store_true", help="also run the Go benchmarks on WebGPU (no diffusers peer)")
    ap.add_argument("--doc", help="write the table as a section of this Markdown file (docs/perf.md)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    table = []
    godir = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory(prefix="bench_diffusers") as tmp:
        binary = benchenv.go_test_binary("./diffuse/", tmp)
        for i, (config, label) in enumerate(CONFIGS.items()):
            # The CPU cases take turns with diffusers' (benchenv.alternating); WebGPU's have no peer.
            go, ref = benchenv.alternating(go_cmd(binary, config, i == 0, "cpu"), godir,
                                           torch_cases(config, schedulers=i == 0), args.count)
            if args.webgpu:
                webgpu = go_cmd(binary, config, i == 0, "webgpu") + ["-test.count", "1"]
                go.update(benchenv.go_bench(webgpu, root=godir))
            if i == 0:
                SCHEDULER_LOOP.update(go=go.get("SchedulerLoop/cpu/DDIMScheduler"),
                                      peer=ref.get("SchedulerLoop/cpu/DDIMScheduler"))
            table += rows(go, ref, label)
        extra = quality_and_memory(binary, godir)
    import diffusers

    print(f"\nthreads {THREADS}; PyTorch {torch.__version__}, diffusers {diffusers.__version__}\n")
    print("| case | webtensor ms | diffusers ms | diffusers time / ours |")
    print("|---|---|---|---|")
    for name, ours, peer in table:
        ratio = f"{peer / ours:.2f}" if peer else "-"
        peer_ms = f"{peer * 1e3:.2f}" if peer else "-"
        print(f"| {name} | {ours * 1e3:.2f} | {peer_ms} | {ratio} |")
    print("\n| measure | webtensor | target |\n|---|---|---|")
    print("\n".join(extra))
    if args.doc:
        write_doc(args.doc, table, extra, load, args.count)


if __name__ == "__main__":
    main()
